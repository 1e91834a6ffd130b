// Package jaeger checks researchtui's OpenTelemetry export against a genuine
// collector, Jaeger all-in-one (built by scripts/build-jaeger.sh). Its tests
// are behind the build tag "integration":
//
//	go test -tags integration -count=1 ./integration/jaeger/
package jaeger
