package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// debugAddrEnv names the loopback address at which a researchtui serves
// Go's pprof profiles (goroutines, heap, CPU): what a soak or a hung
// process is diagnosed by. Unset, nothing is served.
const debugAddrEnv = "RESEARCHTUI_DEBUG_ADDR"

// serveDebug starts the pprof server when RESEARCHTUI_DEBUG_ADDR is set.
// Only loopback is served: profiles show queries and paths.
func serveDebug() {
	addr := os.Getenv(debugAddrEnv)
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(os.Stderr, "researchtui: %s=%s ignored: it wants a loopback HOST:PORT such as 127.0.0.1:6060\n", debugAddrEnv, addr)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "researchtui: %s: %v\n", debugAddrEnv, err)
		return
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
}
