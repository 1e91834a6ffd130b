package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio connection ends at the first frame it cannot decode,
// and with it every call in flight. A client that writes one bad line (a
// stray log line on the pipe, a truncated message) should get an error
// for that line and keep its session, as JSON-RPC says: a parse error
// (-32700) for a line that is not JSON, an invalid request (-32600) for
// JSON that is not a JSON-RPC message.

// maxFrame bounds one inbound line, as the SDK's default does.
const maxFrame = mcp.DefaultMaxLineLength

// frameFilter passes on the lines of src that the SDK can read and answers
// each other line itself, through out.
type frameFilter struct {
	src     *bufio.Reader
	out     *lockedWriter
	pending []byte
	err     error
}

// lockedWriter writes whole frames, one at a time: the SDK's answers and
// the filter's share the pipe.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filteredTransport is a stdio transport over in and out that survives
// malformed frames.
func filteredTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{Reader: &frameFilter{src: bufio.NewReaderSize(in, 64<<10), out: w}, Writer: w}
}

func (f *frameFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.line()
		f.err = err
		line = bytes.TrimSpace(line)
		if len(line) == 0 && !tooLong {
			continue
		}
		answer := frameError(line)
		if tooLong {
			answer = rpcError(nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a message longer than %d MB", maxFrame>>20))
		}
		if answer != nil {
			if _, werr := f.out.Write(answer); werr != nil {
				return 0, werr
			}
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *frameFilter) Close() error { return nil }

// line reads one line (with its newline, if it has one). A line over
// maxFrame is read to its end and dropped: tooLong.
func (f *frameFilter) line() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.src.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) <= maxFrame {
			line = append(line, chunk...)
		} else {
			tooLong, line = true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// frameError is the answer to a line that is no JSON-RPC message, nil for
// one that is (or a batch of them).
func frameError(line []byte) []byte {
	if !json.Valid(line) {
		return rpcError(nil, jsonrpc.CodeParseError, "Parse error: the line is not JSON")
	}
	msgs := []json.RawMessage{line}
	if line[0] == '[' {
		if json.Unmarshal(line, &msgs) != nil || len(msgs) == 0 {
			return rpcError(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty or malformed batch")
		}
	}
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			var probe struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(m, &probe)
			return rpcError(probe.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
		}
	}
	return nil
}

// rpcError is a JSON-RPC error response line; id is null unless the
// message had a usable one (a number or a string).
func rpcError(id json.RawMessage, code int64, msg string) []byte {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}
