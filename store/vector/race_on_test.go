//go:build race

package vector

// raceOn scales test sizes down under the race detector, which slows the
// graph code tenfold; the full sizes run in plain `go test`.
const raceOn = true
