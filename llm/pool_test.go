package llm

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

func chatReq(model string) ChatRequest {
	return ChatRequest{Model: model, Messages: []Message{{Role: "user", Content: "hello"}}}
}

func TestPoolSkipsAClosedHost(t *testing.T) {
	t.Parallel()
	live := ollamafake.New(ollamafake.Options{})
	defer live.Close()
	dead := ollamafake.New(ollamafake.Options{})
	dead.Close()

	b, err := NewOllamaHosts(dead.URL+", "+live.URL, OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := b.(*Pool)
	if !ok {
		t.Fatalf("two hosts gave %T, want *Pool", b)
	}
	if p.Host() != strings.TrimPrefix(dead.URL, "")+","+live.URL {
		t.Fatalf("Host() = %q", p.Host())
	}
	if err := p.Ping(t.Context()); err != nil {
		t.Fatalf("ping with one live host: %v", err)
	}
	for i := range 6 {
		if _, err := p.Chat(t.Context(), chatReq("qwen3:8b"), nil); err != nil {
			t.Fatalf("chat %d: %v", i, err)
		}
	}
	if _, _, err := p.Embed(t.Context(), "nomic-embed-text", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	st := p.Status()
	if st[0].Up || st[0].LastError == nil || !IsUnreachable(st[0].LastError) {
		t.Fatalf("dead host not marked down: %+v", st[0])
	}
	if !st[1].Up || st[1].Served != 7 {
		t.Fatalf("live host: %+v", st[1])
	}
	if got := len(live.ChatCalls()); got != 6 {
		t.Fatalf("live host served %d chats, want 6", got)
	}
}

func TestPoolAllDownIsUnreachable(t *testing.T) {
	t.Parallel()
	a := ollamafake.New(ollamafake.Options{})
	a.Close()
	b := ollamafake.New(ollamafake.Options{})
	b.Close()
	p, err := NewOllamaHosts(a.URL+","+b.URL, OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Ping(t.Context()); !IsUnreachable(err) || !strings.Contains(err.Error(), "OLLAMA_HOST") {
		t.Fatalf("ping: %v", err)
	}
	_, err = p.Chat(t.Context(), chatReq("qwen3:8b"), nil)
	if !IsUnreachable(err) || !strings.Contains(err.Error(), a.URL) || !strings.Contains(err.Error(), b.URL) {
		t.Fatalf("chat: %v", err)
	}
}

func TestPoolSpreadsConcurrentCalls(t *testing.T) {
	t.Parallel()
	slow := ollamafake.Options{TokenDelay: 5 * time.Millisecond}
	a, b := ollamafake.New(slow), ollamafake.New(slow)
	defer a.Close()
	defer b.Close()
	p, _ := NewOllamaHosts(a.URL+","+b.URL, OllamaOptions{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := p.Chat(context.Background(), chatReq("qwen3:8b"), nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	na, nb := len(a.ChatCalls()), len(b.ChatCalls())
	if na+nb != 8 || na < 2 || nb < 2 {
		t.Fatalf("calls not spread: %d and %d", na, nb)
	}
}

func TestPoolModelOnOneHostOnly(t *testing.T) {
	t.Parallel()
	a := ollamafake.New(ollamafake.Options{Models: map[string]ollamafake.Model{
		"only-here": {ContextLength: 8192, Capabilities: []string{"completion"}, Family: "llama"}}})
	b := ollamafake.New(ollamafake.Options{})
	defer a.Close()
	defer b.Close()
	p, _ := NewOllamaHosts(b.URL+","+a.URL, OllamaOptions{})
	for range 3 {
		if _, err := p.Chat(t.Context(), chatReq("only-here"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.ChatCalls()) != 3 {
		t.Fatalf("host with the model served %d", len(a.ChatCalls()))
	}
	if _, err := p.Show(t.Context(), "nowhere"); !IsModelMissing(err) {
		t.Fatalf("model on no host: %v", err)
	}
}

// switchable serves target on a fixed loopback address that can be taken
// down (nothing listens: connection refused) and brought back.
type switchable struct {
	t      *testing.T
	addr   string
	target *url.URL
	srv    *http.Server
}

func newSwitchable(t *testing.T, target string) *switchable {
	u, _ := url.Parse(target)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &switchable{t: t, addr: l.Addr().String(), target: u}
	s.serve(l)
	t.Cleanup(s.down)
	return s
}

func (s *switchable) serve(l net.Listener) {
	s.srv = &http.Server{Handler: httputil.NewSingleHostReverseProxy(s.target)}
	go s.srv.Serve(l)
}

func (s *switchable) down() {
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

func (s *switchable) up() {
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatalf("re-listen on %s: %v", s.addr, err)
	}
	s.serve(l)
}

func TestPoolHostRecoversAfterCooldown(t *testing.T) {
	t.Parallel()
	a, b := ollamafake.New(ollamafake.Options{}), ollamafake.New(ollamafake.Options{})
	defer a.Close()
	defer b.Close()
	sw := newSwitchable(t, b.URL)
	sw.down()

	be, _ := NewOllamaHosts(a.URL+",http://"+sw.addr, OllamaOptions{})
	p := be.(*Pool)
	var mu sync.Mutex
	now := time.Now()
	p.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	for range 4 {
		if _, err := p.Chat(t.Context(), chatReq("qwen3:8b"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.ChatCalls()) != 4 || p.Status()[1].Up {
		t.Fatalf("while b is down: a served %d, b status %+v", len(a.ChatCalls()), p.Status()[1])
	}
	sw.up()
	// Still cooling down: b is not asked yet.
	p.Chat(t.Context(), chatReq("qwen3:8b"), nil)
	if len(b.ChatCalls()) != 0 {
		t.Fatal("b was used during its cool-down")
	}
	advance(poolMinCooldown + time.Millisecond)
	for range 4 {
		if _, err := p.Chat(t.Context(), chatReq("qwen3:8b"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(b.ChatCalls()) < 2 || !p.Status()[1].Up {
		t.Fatalf("b did not rejoin: %d calls, %+v", len(b.ChatCalls()), p.Status()[1])
	}
}

func TestNewOllamaHostsSingle(t *testing.T) {
	t.Parallel()
	b, err := NewOllamaHosts(" localhost:11434 ", OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(*Ollama); !ok || b.Host() != "http://localhost:11434" {
		t.Fatalf("%T %s", b, b.Host())
	}
	if b, _ := NewOllamaHosts("a:1,a:1", OllamaOptions{}); b.Host() != "http://a:1" {
		t.Fatalf("duplicates not merged: %s", b.Host())
	}
}
