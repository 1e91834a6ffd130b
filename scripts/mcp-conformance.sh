#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# from npm) against `researchtui mcp --http` for the generic server
# scenarios. It needs Node 20+ and npm; it needs no Ollama and no network
# besides npm: the server runs on the test fakes (tools/fakeserve) in a
# throw-away data dir.
#
#   scripts/mcp-conformance.sh                  # the six scenarios below
#   SCENARIOS="ping tools-list" scripts/mcp-conformance.sh
#   CONFORMANCE_VERSION=0.1.16 scripts/mcp-conformance.sh   # needs Node 22
#
# Exit status: 0 when every scenario passed.
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=${SCENARIOS:-"server-initialize ping tools-list resources-list prompts-list logging-set-level"}
VERSION=${CONFORMANCE_VERSION:-0.1.9}
PORT=${PORT:-18765}

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/researchtui" .
go build -o "$work/fakeserve" ./tools/fakeserve
"$work/fakeserve" -delay 1ms >"$work/fake.env" 2>"$work/fake.log" &
pids+=($!)
for _ in $(seq 50); do grep -q OLLAMA_HOST "$work/fake.env" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC1091
source "$work/fake.env"
export RESEARCHTUI_DATA_DIR="$work/data" RESEARCHTUI_CONFIG="$work/config.toml"

"$work/researchtui" mcp --http "127.0.0.1:$PORT" 2>"$work/server.log" &
pids+=($!)
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	sleep 0.1
done

(cd "$work" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "@modelcontextprotocol/conformance@$VERSION" >/dev/null)

failed=0
for s in $SCENARIOS; do
	if (cd "$work" && npx --no-install conformance server --url "http://127.0.0.1:$PORT/mcp" --scenario "$s") >"$work/$s.out" 2>&1; then
		echo "PASS  $s"
	else
		echo "FAIL  $s"
		failed=$((failed + 1))
	fi
	grep -Ev '^npm warn' "$work/$s.out" | sed 's/^/      /' | tail -n 25
done
echo "server log:"; sed 's/^/      /' "$work/server.log" | tail -n 20
if [ "$failed" -gt 0 ]; then
	echo "$failed scenario(s) failed"
	exit 1
fi
echo "all scenarios passed"
