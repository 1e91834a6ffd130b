package main

import (
	_ "embed"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// The one-GPU world of issue 24: one request served at a time, 300 ms to
// the first token plus prompt prefill at 1,500 tokens/s (a shared prefix
// cached as Ollama's runner does), 20 ms per generated token, web search
// answering in 300 ms.
const (
	tokenDelay      = 20 * time.Millisecond
	firstTokenDelay = 300 * time.Millisecond
	prefillRate     = 1500
	searchLatency   = 300 * time.Millisecond
	embedDelay      = 50 * time.Millisecond
)

// chatModel is the model both programs are pointed at: a plain chat model
// (no thinking stream), so neither pays for reasoning tokens.
const chatModel = "llama3.1:8b"

//go:embed testdata/search-q-python-format-json.json
var searxngAnswer []byte

// world is one run's fake model server and search engine. Each run gets a
// fresh one (no prompt cache or counters carried over); the fixed
// addresses the programs are configured with proxy to the current world.
type world struct {
	model  *ollamafake.Server
	search *httptest.Server
	tally  *tally
}

// tally counts each agent's calls and generated tokens (the same estimate
// the server charges: a word's characters / 4), for -v.
type tally struct {
	mu           sync.Mutex
	calls, words map[string]int
}

func (t *tally) add(kind, content string) {
	n := 0
	for _, w := range strings.Fields(content) {
		n += max(1, (len(w)+3)/4)
	}
	t.mu.Lock()
	t.calls[kind]++
	t.words[kind] += n
	t.mu.Unlock()
}

func newWorld(q question) *world {
	script := &pipelinetest.Script{Realistic: true, PlainReport: true, ByReference: true, Topics: q.topics, Canonical: q.canonical}
	peer := peerModel{topics: q.topics}
	researchtui := script.Responder()
	t := &tally{calls: map[string]int{}, words: map[string]int{}}
	respond := func(call ollamafake.ChatCall) ollamafake.Reply {
		if isPeerCall(call) {
			kind, r := peer.answer(call)
			t.add("peer "+kind, r.Content)
			return r
		}
		r := researchtui(call)
		t.add(pipelinetest.KindOf(call), r.Content)
		dumpCall(pipelinetest.KindOf(call), call, r)
		return r
	}
	models := map[string]ollamafake.Model{
		chatModel:          {ContextLength: 131072, Capabilities: []string{"completion", "tools"}, Family: "llama"},
		"nomic-embed-text": {ContextLength: 2048, Capabilities: []string{"embedding"}, EmbedDim: 768, Family: "nomic-bert"},
	}
	m := ollamafake.New(ollamafake.Options{Models: models, Responder: respond, TokenDelay: tokenDelay,
		FirstTokenDelay: firstTokenDelay, PrefillRate: prefillRate, TokensByChars: true, Parallel: 1, EmbedDelay: embedDelay})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-time.After(searchLatency):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(searxngAnswer)
	}))
	return &world{model: m, search: s, tally: t}
}

func (w *world) close() {
	w.model.Close()
	w.search.Close()
}

// switchboard serves a fixed address and forwards to the current world.
type switchboard struct {
	mu     sync.Mutex
	target *url.URL
}

func (s *switchboard) point(raw string) {
	u, _ := url.Parse(raw)
	s.mu.Lock()
	s.target = u
	s.mu.Unlock()
}

func (s *switchboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	t := s.target
	s.mu.Unlock()
	if t == nil {
		http.Error(w, "no world running", http.StatusServiceUnavailable)
		return
	}
	p := httputil.NewSingleHostReverseProxy(t)
	p.FlushInterval = -1 // stream every chunk as the model writes it
	p.ServeHTTP(w, r)
}

// dumpTo, when set (-dump), receives every researchtui call's prompt and
// answer, to see what the model is asked to read and write.
var dumpTo string

func dumpCall(kind string, call ollamafake.ChatCall, r ollamafake.Reply) {
	if dumpTo == "" {
		return
	}
	fh, err := os.OpenFile(dumpTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer fh.Close()
	fmt.Fprintf(fh, "=== %s\n", kind)
	for _, m := range call.Messages {
		fmt.Fprintf(fh, "--- %s\n%s\n", m.Role, m.Content)
	}
	fmt.Fprintf(fh, "+++ reply\n%s\n", r.Content)
}
