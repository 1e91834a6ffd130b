#!/usr/bin/env bash
# The acceptance check of issue 18 with the official TypeScript SDK client:
# builds researchtui and tools/fakeserve, installs @modelcontextprotocol/sdk
# from npm into a temporary directory, and runs scripts/mcp-ts-client.mjs
# against `researchtui mcp` over stdio (no Ollama, no network besides npm).
#
#   scripts/mcp-ts-client.sh
#   TS_SDK_VERSION=1.32.2 scripts/mcp-ts-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${TS_SDK_VERSION:-1.32.2}

work=$(mktemp -d)
fake=""
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/researchtui" .
go build -o "$work/fakeserve" ./tools/fakeserve
# every review asks for revisions, so a run started with review "ask" waits
# for a person (the long-job checks cancel it there)
"$work/fakeserve" -delay 1ms -revision-rounds 1000 >"$work/fake.env" 2>"$work/fake.log" &
fake=$!
for _ in $(seq 50); do grep -q OLLAMA_HOST "$work/fake.env" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC1091
source "$work/fake.env"
printf 'full_text = false\n' >"$work/config.toml"
export RESEARCHTUI_DATA_DIR="$work/data" RESEARCHTUI_CONFIG="$work/config.toml"

cp scripts/mcp-ts-client.mjs "$work/"
(cd "$work" && npm init -y >/dev/null 2>&1 && npm pkg set type=module >/dev/null && npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$VERSION" >/dev/null 2>&1)
(cd "$work" && node mcp-ts-client.mjs "$work/researchtui")
