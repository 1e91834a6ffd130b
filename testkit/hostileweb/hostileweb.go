// Package hostileweb serves the web pages that once held a run for minutes:
// bodies that never end, by size or by pace. The search package's download
// rule and the pipeline's run over hostile web results test against it.
package hostileweb

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server answers four paths: /endless.html and /endless.pdf (a page and a
// "PDF" that never end), /drip.html (a byte every 50 ms, for ever) and
// /bomb.html (a gzip body that never ends once decompressed, flushed after
// every megabyte so its size, not a slow first byte, is what is judged).
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

// New starts a Server that closes when the test ends.
func New(t testing.TB) *Server {
	s := &Server{hits: map[string]int{}}
	chunk := bytes.Repeat([]byte("<p>endless text about python and testing</p>\n"), 2000)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		fl, _ := w.(http.Flusher)
		switch r.URL.Path {
		case "/endless.html", "/endless.pdf":
			if strings.HasSuffix(r.URL.Path, ".pdf") {
				w.Write([]byte("%PDF-1.5\n"))
			}
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/drip.html":
			w.Write([]byte("<html>"))
			for r.Context().Err() == nil {
				fl.Flush()
				time.Sleep(time.Second / 20)
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
			}
		case "/bomb.html":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zeros := make([]byte, 1<<20)
			for r.Context().Err() == nil {
				if _, err := zw.Write(zeros); err != nil {
					return
				}
				zw.Flush()
				fl.Flush()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// Hits is how many times path was asked for.
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}
