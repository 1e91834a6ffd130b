package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

const (
	// MaxBatch is the most messages one POST may carry as a JSON-RPC batch.
	// Protocol 2025-06-18 dropped batches and the SDK refuses them there,
	// but it still runs every message of an older client's batch, and a
	// 4 MiB body holds some 26,000 calls.
	MaxBatch = 16
	// maxBody bounds one POST (the SDK's own default).
	maxBody = 4 << 20
	// writeStall is how long one write of a response may block before the
	// connection is given up: a client that stopped reading.
	writeStall = 30 * time.Second
)

// limitBody reads a POST's body (up to maxBody) and refuses a batch of
// more than MaxBatch messages with a JSON-RPC error; the body is put back
// for the SDK. It reports false when it answered the request itself.
func limitBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, fmt.Sprintf("reading the request: %v (at most %d bytes)", err, maxBody), http.StatusRequestEntityTooLarge)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		return true
	}
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) == nil && len(batch) > MaxBatch {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a JSON-RPC batch may hold at most %d messages (this one holds %d); send them in separate requests"}}`, MaxBatch, len(batch))
		return false
	}
	return true
}

// streamingWriter gives every write of a response its own deadline
// (writeStall from the write), in place of the server's WriteTimeout: an
// event stream or a research call may rightly write for an hour, but no
// single write should wait long on a client that stopped reading.
type streamingWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func newStreamingWriter(w http.ResponseWriter) *streamingWriter {
	return &streamingWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
}

func (s *streamingWriter) arm() { _ = s.rc.SetWriteDeadline(time.Now().Add(writeStall)) }

func (s *streamingWriter) Write(p []byte) (int, error) {
	s.arm()
	return s.ResponseWriter.Write(p)
}

func (s *streamingWriter) WriteHeader(code int) {
	s.arm()
	s.ResponseWriter.WriteHeader(code)
}

// FlushError is what http.ResponseController.Flush calls.
func (s *streamingWriter) FlushError() error {
	s.arm()
	return s.rc.Flush()
}

func (s *streamingWriter) Flush() { _ = s.FlushError() }

func (s *streamingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) { return s.rc.Hijack() }

func (s *streamingWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
