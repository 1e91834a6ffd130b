package mcp

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	// Token, when set, must come as "Authorization: Bearer TOKEN" on every
	// request (the scheme in any case). ui/cli requires one for an address
	// other than loopback.
	Token string
	// SessionIdle ends a session after this long without a request in
	// flight (DefaultSessionIdle when zero).
	SessionIdle time.Duration
	// MaxSessions caps the sessions kept at once; a new one ends the
	// longest idle (DefaultMaxSessions when zero).
	MaxSessions int
}

// Handler serves Streamable HTTP at /mcp. Checks and limits wrap the SDK's
// handler, which makes none of them: a request from a browser page of
// another origin gets 403 (net/http's CrossOriginProtection; without it any
// web page the person visits could drive the server on localhost); with a
// token, a request without it gets 401; a batch of more than MaxBatch
// messages gets 400; idle sessions end (sessionKeeper). The http.Server's
// read and write timeouts suit short requests: once a request's body is
// read, its connection may stream for as long as the call lasts, each
// write bounded on its own (streamingWriter).
func (s *Server) Handler(opt HTTPOptions) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{Logger: s.log, MaxRequestBodyBytes: maxBody})
	keeper := newSessionKeeper(s.srv, opt.SessionIdle, opt.MaxSessions)
	cop := http.NewCrossOriginProtection()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !limitBody(w, r) {
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{}) // the body is read; the stream may last
		keeper.serve(s.base, newStreamingWriter(w), r, sdk)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "researchtui serves MCP at /mcp", http.StatusNotFound)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cop.Check(originProbe(r)); err != nil {
			http.Error(w, "cross-origin request refused: "+err.Error(), http.StatusForbidden)
			return
		}
		if opt.Token != "" && !bearerOK(r, opt.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="researchtui"`)
			http.Error(w, "a bearer token is required (Authorization: Bearer TOKEN; see --token)", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// originProbe is the request as CrossOriginProtection should judge it.
// CrossOriginProtection lets safe methods through, but a GET on /mcp opens
// the server's event stream, so GETs are judged as if they were POSTs.
func originProbe(r *http.Request) *http.Request {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return r
	}
	p := r.Clone(r.Context())
	p.Method = http.MethodPost
	return p
}

// bearerOK checks "Authorization: Bearer TOKEN"; the scheme is
// case-insensitive (RFC 9110 §11.1), so "bearer" works too.
func bearerOK(r *http.Request, token string) bool {
	scheme, got, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// IsLoopback reports whether a listen address (host:port) only accepts
// connections from this machine. An empty host (":8080") listens on every
// interface, so it is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
