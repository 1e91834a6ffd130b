// Package integration holds the tests that run against a genuine Ollama
// server (v0.17.4, built by tools/real-ollama/build.sh) serving
// two tiny locally generated models, tiny-chat and tiny-embed. They are
// behind the build tag "integration", so `go test ./...` never needs the
// server:
//
//	go test -tags integration -v ./integration/
//
// TestMain starts the server through serve.sh on a free loopback port
// (REAL_OLLAMA_TOOLS names the tools folder; default ../tools/real-ollama
// from here), or uses OLLAMA_TEST_URL when a server already runs. The
// models' answers are gibberish: the tests check protocol, schemas, usage
// and robustness, never wording.
package integration
