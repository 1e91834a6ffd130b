#!/usr/bin/env bash
# Build Jaeger all-in-one, the genuine OTLP collector the tracing integration
# test (integration/jaeger) exports to, from the Go module proxy into GOBIN.
#
#   usage: build-jaeger.sh [GOBIN]        (default: $(go env GOPATH)/bin)
#   env:   JAEGER_VERSION (default v1.76.0)
#
# Idempotent: exits 0 without building when GOBIN/jaeger-all-in-one exists and
# its stamp (jaeger-all-in-one.version beside it) names JAEGER_VERSION.
# `go install github.com/jaegertracing/jaeger/cmd/all-in-one@v1.76.0` is
# refused (jaeger's go.mod has a replace directive), so the module's source is
# downloaded and built as the main module. Pure Go, no cgo.
set -euo pipefail

JAEGER_VERSION=${JAEGER_VERSION:-v1.76.0}
GOBIN_DIR=${1:-${GOBIN:-$(go env GOPATH)/bin}}
BIN="$GOBIN_DIR/jaeger-all-in-one"

if [ -x "$BIN" ] && [ "$(cat "$BIN.version" 2>/dev/null)" = "$JAEGER_VERSION" ]; then
  echo "build-jaeger.sh: $BIN is already jaeger $JAEGER_VERSION, skipping build" >&2
  exit 0
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SRC=$(cd "$WORK" && GOFLAGS= go mod download -json "github.com/jaegertracing/jaeger@$JAEGER_VERSION" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -f "$SRC/go.mod" ] || { echo "build-jaeger.sh: jaeger $JAEGER_VERSION not found in the module cache ($SRC)" >&2; exit 1; }
cp -r "$SRC" "$WORK/src"
chmod -R u+w "$WORK/src"

mkdir -p "$GOBIN_DIR"
echo "build-jaeger.sh: building jaeger $JAEGER_VERSION cmd/all-in-one -> $BIN (slow the first time: ~1,700 packages, ~10 min of CPU)" >&2
(cd "$WORK/src" && GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0 \
  go build -trimpath -ldflags="-s -w" -o "$BIN.tmp" ./cmd/all-in-one)
mv "$BIN.tmp" "$BIN"
echo "$JAEGER_VERSION" > "$BIN.version"
echo "build-jaeger.sh: built $BIN" >&2
