package search

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestIsUnreachable(t *testing.T) {
	t.Parallel()
	// A port nobody listens on: connection refused, a dial error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(ClientOptions{Retries: -1})
	f := NewFetcher(c, FetchOptions{AllowPrivate: true, Timeout: 5 * time.Second})
	_, err = f.Fetch(context.Background(), "http://"+addr+"/paper.pdf")
	if err == nil || !IsUnreachable(err) {
		t.Fatalf("refused connection: IsUnreachable(%v) = false", err)
	}
	// A host that answers, even with an error status, is reachable.
	srv := http.Server{Handler: http.NotFoundHandler()}
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln2)
	defer srv.Close()
	_, err = f.Fetch(context.Background(), "http://"+ln2.Addr().String()+"/missing.pdf")
	if err == nil || IsUnreachable(err) {
		t.Fatalf("404: IsUnreachable(%v) = true, want false", err)
	}
	if got := HostOf("https://arxiv.org/pdf/1111.2011"); got != "arxiv.org" {
		t.Errorf("HostOf = %q", got)
	}
}
