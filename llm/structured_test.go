package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

type plan struct {
	Queries []string `json:"queries"`
	Reason  string   `json:"reason"`
}

var planSchema = json.RawMessage(`{"type":"object","properties":{"queries":{"type":"array","items":{"type":"string"}},"reason":{"type":"string"}},"required":["queries"]}`)

func validatePlan(p *plan) error {
	if len(p.Queries) == 0 {
		return errors.New("queries must not be empty")
	}
	return nil
}

func fallbackPlan() plan { return plan{Queries: []string{"fallback"}} }

func runPlan(t *testing.T, replies ...ollamafake.Reply) (plan, StructuredInfo, error, *ollamafake.Server) {
	t.Helper()
	srv, o := newFake(t, ollamafake.Options{Responder: ollamafake.Sequence(replies...)})
	req := ChatRequest{Model: "qwen3:8b", Messages: user("plan queries"), Schema: planSchema}
	p, info, err := Structured(context.Background(), o, req, validatePlan, fallbackPlan, nil)
	return p, info, err, srv
}

func TestStructuredValid(t *testing.T) {
	t.Parallel()
	p, info, err, srv := runPlan(t, ollamafake.Reply{Content: `{"queries":["a","b"],"reason":"r"}`})
	if err != nil || len(p.Queries) != 2 || info.Attempts != 1 || info.Repaired || info.Fallback {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
	if string(srv.ChatCalls()[0].Format) != string(planSchema) {
		t.Fatal("schema not sent as format")
	}
	if info.NumCtx != 4096 || info.Usage.CompletionTokens != srv.Served().CompletionTokens || info.Usage.PromptTokens == 0 {
		t.Fatalf("info %+v", info)
	}
}

func TestStructuredRepaired(t *testing.T) {
	t.Parallel()
	messy := "Sure! Here is the plan:\n```json\n{\"queries\": [\"graph nets\", \"gnn survey\",],\n \"reason\": \"x\",}\n```\nHope this helps."
	p, info, err, _ := runPlan(t, ollamafake.Reply{Content: messy})
	if err != nil || len(p.Queries) != 2 || p.Queries[1] != "gnn survey" || !info.Repaired || info.Attempts != 1 || info.Fallback {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
}

func TestStructuredRetryThenFallback(t *testing.T) {
	t.Parallel()
	p, info, err, srv := runPlan(t,
		ollamafake.Reply{Content: "I cannot decide."},
		ollamafake.Reply{Content: `{"queries": }`},
	)
	if err != nil || !info.Fallback || info.Attempts != 2 || p.Queries[0] != "fallback" {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
	if len(info.Warnings) == 0 || !strings.Contains(info.Warnings[0], "fallback") {
		t.Fatalf("warnings %v", info.Warnings)
	}
	calls := srv.ChatCalls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	msgs := calls[1].Messages
	if len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[1].Content != "I cannot decide." ||
		msgs[2].Role != "user" || !strings.Contains(msgs[2].Content, "invalid JSON") {
		t.Fatalf("retry messages %+v", msgs)
	}
	served := srv.Served()
	if info.Usage.PromptTokens != served.PromptTokens || info.Usage.CompletionTokens != served.CompletionTokens {
		t.Fatalf("usage %+v not summed, served %+v", info.Usage, served)
	}
}

func TestStructuredValidationErrorRetried(t *testing.T) {
	t.Parallel()
	p, info, err, srv := runPlan(t,
		ollamafake.Reply{Content: `{"queries": []}`},
		ollamafake.Reply{Content: `{"queries": ["ok"]}`},
	)
	if err != nil || info.Fallback || info.Attempts != 2 || p.Queries[0] != "ok" {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
	if last := srv.ChatCalls()[1].Messages[2].Content; !strings.Contains(last, "queries must not be empty") {
		t.Fatalf("retry does not carry the validation error: %q", last)
	}
}

func TestStructuredHTTP500Fallback(t *testing.T) {
	t.Parallel()
	p, info, err, _ := runPlan(t, ollamafake.Reply{Status: 500, Error: "model runner has unexpectedly stopped"})
	if err != nil || !info.Fallback || p.Queries[0] != "fallback" || info.Attempts != 1 {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
}

func TestStructuredDroppedStream(t *testing.T) {
	t.Parallel()
	// Dropped once: retried as is.
	p, info, err, srv := runPlan(t,
		ollamafake.Reply{Content: `{"queries": ["a", "b"]}`, DropAfter: 1},
		ollamafake.Reply{Content: `{"queries": ["a", "b"]}`},
	)
	if err != nil || info.Fallback || info.Attempts != 2 || len(p.Queries) != 2 {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
	if n := len(srv.ChatCalls()[1].Messages); n != 1 {
		t.Fatalf("a dropped stream is retried with the same messages, got %d", n)
	}
	// Dropped twice: fallback.
	p, info, err, _ = runPlan(t, ollamafake.Reply{Content: `{"queries": ["a"]}`, DropAfter: 1})
	if err != nil || !info.Fallback || info.Attempts != 2 || p.Queries[0] != "fallback" {
		t.Fatalf("%+v %+v %v", p, info, err)
	}
}

func TestStructuredHardErrors(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{})
	_, _, err := Structured(context.Background(), o, ChatRequest{Model: "missing:7b", Messages: user("x"), Schema: planSchema},
		validatePlan, fallbackPlan, nil)
	if !IsModelMissing(err) {
		t.Fatalf("missing: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = Structured(ctx, o, ChatRequest{Model: "qwen3:8b", Messages: user("x"), Schema: planSchema},
		validatePlan, fallbackPlan, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	down, _ := NewOllama(closedAddr(t), OllamaOptions{})
	_, _, err = Structured(context.Background(), down, ChatRequest{Model: "qwen3:8b", Messages: user("x"), Schema: planSchema},
		validatePlan, fallbackPlan, nil)
	if !IsUnreachable(err) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestStructuredThinkingNotParsed(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{Responder: func(ollamafake.ChatCall) ollamafake.Reply {
		return ollamafake.Reply{Thinking: `maybe {"queries": ["wrong"]}`, Content: `{"queries": ["right"]}`}
	}})
	var thought strings.Builder
	p, _, err := Structured(context.Background(), o, ChatRequest{Model: "qwen3:8b", Messages: user("x"), Schema: planSchema, Think: true},
		validatePlan, fallbackPlan, func(d Delta) { thought.WriteString(d.Thinking) })
	if err != nil || p.Queries[0] != "right" || !strings.Contains(thought.String(), "wrong") {
		t.Fatalf("%+v %v %q", p, err, thought.String())
	}
	_ = srv
}
