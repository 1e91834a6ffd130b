#!/usr/bin/env bash
# Issue 29's soak: `researchtui mcp --http` on loopback under an hour of
# steady use by researchers, watchers and clients that abandon sessions, in
# the fast fake world; prints the server's goroutines, heap, memory, file
# descriptors and threads over time, judges the plateau, then restarts the
# server and checks every finished session is stored as its client saw it.
# Not run in CI.
#
#   scripts/mcp-soak.sh                 # one hour
#   scripts/mcp-soak.sh -duration 5m    # any tools/mcpsoak flags
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/researchtui" .
go build -o "$work/fakeserve" ./tools/fakeserve
go build -o "$work/mcpsoak" ./tools/mcpsoak
"$work/mcpsoak" -researchtui "$work/researchtui" -fakeserve "$work/fakeserve" "$@"
