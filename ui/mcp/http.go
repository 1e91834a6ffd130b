package mcp

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	// Token, when set, must come as "Authorization: Bearer TOKEN" on every
	// request. ui/cli requires one for an address other than loopback.
	Token string
}

// Handler serves Streamable HTTP at /mcp. Two checks wrap the SDK's
// handler, which makes neither: a request from a browser page of another
// origin gets 403 (net/http's CrossOriginProtection; without it any web
// page the person visits could drive the server on localhost), and with a
// token, a request without it gets 401.
func (s *Server) Handler(opt HTTPOptions) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{Logger: s.log})
	cop := http.NewCrossOriginProtection()
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk)
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

func bearerOK(r *http.Request, token string) bool {
	h := r.Header.Get("Authorization")
	got, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
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
