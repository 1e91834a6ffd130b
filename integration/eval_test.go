//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/report"
)

// TestEvalOnRealOllama (issue 40): with the genuine server and the tiny
// random model, eval completes and reports, however bad the scores. A run
// the gibberish model makes fail must be a Result with its Error, not a
// stopped eval.
//
// One run of one question, with eval's own options (standard depth): no
// cap on generation is needed, as the tiny model stops by itself (~850
// tokens in all). On the arXiv world it takes ~40 s on 2 idle cores (the
// Semantic Scholar world's 100 abstracts took tiny-embed ~100 s more).
// The deadline fails a stuck run clearly, within the suite's timeout.
func TestEvalOnRealOllama(t *testing.T) {
	t0 := time.Now()
	const deadline = 8 * time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	// The arXiv world's 10 recorded papers, not the Semantic Scholar
	// world's 100: tiny-embed on the CPU took most of a run embedding those.
	w, err := eval.Open(ctx, eval.TestingWorld)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	qs, err := eval.Select("gui-testing")
	if err != nil || len(qs) != 1 {
		t.Fatalf("select: %v %v", qs, err)
	}

	var mu sync.Mutex
	var stages []string
	m := newMeter(t, ollamaURL)
	b, err := llm.NewOllama(m.URL, llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	timed := &timedBackend{Backend: b}
	setup := eval.Setup{
		LLM: timed, Model: chatModel, EmbedModel: embedModel, Seed: 42, Dir: t.TempDir(),
		OnEvent: func(ev pipeline.Event) {
			switch ev.Type {
			case pipeline.StageStarted, pipeline.Warning, pipeline.RunFailed:
				mu.Lock()
				stages = append(stages, time.Since(t0).Round(time.Second).String()+" "+ev.Summary())
				mu.Unlock()
			}
		},
	}
	sum, err := eval.Run(ctx, setup, w, qs, 1, nil)
	sum.Backend = "ollama"
	t.Logf("eval took %s", time.Since(t0).Round(time.Millisecond))
	for _, s := range stages {
		t.Logf("  %.200s", s)
	}
	t.Logf("backend time: %s", timed)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the eval took over %s: %v", deadline, err)
	}
	if err != nil {
		t.Fatalf("the eval stopped: %v", err)
	}

	if len(sum.Results) != 1 || sum.Results[0].Question != "gui-testing" || sum.Results[0].Run != 1 {
		t.Fatalf("results %+v, want one run of gui-testing", sum.Results)
	}
	r := sum.Results[0]
	if r.Error != "" {
		t.Logf("the random model's run failed: %s", r.Error)
	} else if r.Session == "" || r.OnTopic == 0 || r.Facts == 0 {
		t.Errorf("a run with no error but no scored report: %+v", r)
	}
	if sum.Overall.Runs != 1 {
		t.Errorf("overall runs %d, want 1", sum.Overall.Runs)
	}
	if r.ModelCalls == 0 || r.PromptTokens+r.GeneratedTokens == 0 {
		t.Errorf("the model was not called: %d calls, %d prompt and %d generated tokens", r.ModelCalls, r.PromptTokens, r.GeneratedTokens)
	}
	got := m.served()
	t.Logf("server reported %+v; the eval counted %d calls, %d prompt and %d generated tokens", got, r.ModelCalls, r.PromptTokens, r.GeneratedTokens)
	if r.PromptTokens != got.Prompt || r.GeneratedTokens != got.Completion {
		t.Errorf("the eval's tokens (%d prompt, %d generated) differ from the server's (%d, %d)", r.PromptTokens, r.GeneratedTokens, got.Prompt, got.Completion)
	}
	// Every request a call made counts, retries too; the server may also
	// have answered requests of calls whose event was never logged.
	if r.ModelCalls > got.Chats {
		t.Errorf("the eval counted %d model calls, the server answered %d", r.ModelCalls, got.Chats)
	}
	for name, v := range map[string]float64{
		"recall": r.Recall, "precision": r.Precision, "supported": r.SupportedShare,
		"overall recall": sum.Overall.Recall, "overall precision": sum.Overall.Precision,
		"overall facts": sum.Overall.FactsCovered, "overall supported": sum.Overall.SupportedShare,
	} {
		if v < 0 || v > 1 {
			t.Errorf("%s = %v, outside [0,1]", name, v)
		}
	}

	var table bytes.Buffer
	if err := eval.WriteTable(&table, sum); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	for _, want := range []string{"gui-testing", "overall", chatModel} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q", want)
		}
	}

	enc, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var back eval.Summary
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatalf("the summary's JSON does not decode: %v", err)
	}
	if back.Overall.Runs != 1 || len(back.Results) != 1 || back.Results[0].Error != r.Error || back.Model != chatModel {
		t.Errorf("the summary's JSON round trip lost something: %s", enc)
	}
}

// TestEvalJudgeOnRealOllama: the --judge path over the genuine protocol.
// A copy of the tiny model under another name (the judge may never be the
// model under test) is asked about a paraphrase the lexical judge rejects;
// its gibberish answer is read as a verdict or counted as unclear, its
// tokens counted apart, and the sentence supported only on a YES.
func TestEvalJudgeOnRealOllama(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	base, err := url.Parse(ollamaURL)
	if err != nil {
		t.Fatal(err)
	}
	const judgeModel = "tiny-judge"
	if err := api.NewClient(base, http.DefaultClient).Copy(ctx, &api.CopyRequest{Source: chatModel, Destination: judgeModel}); err != nil {
		t.Fatalf("copying %s to %s: %v", chatModel, judgeModel, err)
	}
	w, err := eval.OpenWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ntm := w.Find("", "", "", "Neural Turing Machines")
	if ntm == nil {
		t.Fatal("the recording lacks Neural Turing Machines")
	}
	rep := pipeline.Report{
		SessionID: "hand",
		Markdown:  "# R\n\nGiving a network an addressable scratchpad lets it pick up simple procedures from examples [1].\n\n## References\n\n1. Graves (2014).\n",
		Sources:   []report.CitedSource{{N: 1, Key: "s2:" + ntm.ID, Title: ntm.Title}},
	}
	r := eval.Score(eval.TuringComplete, w, rep, nil)
	if r.CitedSentences != 1 || r.SupportedByWords != 0 {
		t.Fatalf("the paraphrase should fail the words: %+v", r)
	}
	b, err := llm.NewOllama(ollamaURL, llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.JudgeParaphrase(ctx, &eval.ModelJudge{LLM: b, Model: judgeModel, Seed: 42}); err != nil {
		t.Fatal(err)
	}
	t.Logf("judged %d, accepted %d, unclear %d, %d judge tokens", r.Judged, r.SupportedByJudge, r.JudgeUnclear, r.JudgeTokens)
	if r.Judged != 1 || r.JudgeTokens == 0 || r.Supported != r.SupportedByJudge || r.SupportedByJudge+r.JudgeUnclear > 1 {
		t.Errorf("the judge's work: %+v", r)
	}
	if name := eval.JudgeName(&eval.ModelJudge{Model: judgeModel}); !strings.Contains(name, judgeModel) {
		t.Errorf("the judge's name %q", name)
	}
}

// timedBackend adds up the time spent in each kind of call, so the log
// says where an eval's wall time went.
type timedBackend struct {
	llm.Backend
	mu                          sync.Mutex
	chats, embeds, embedsFailed int
	chatTime, embedTime         time.Duration
	slowestEmbed                time.Duration
	slowestInputs               int
}

func (b *timedBackend) Chat(ctx context.Context, req llm.ChatRequest, onDelta func(llm.Delta)) (llm.ChatResponse, error) {
	t0 := time.Now()
	resp, err := b.Backend.Chat(ctx, req, onDelta)
	b.mu.Lock()
	b.chats++
	b.chatTime += time.Since(t0)
	b.mu.Unlock()
	return resp, err
}

func (b *timedBackend) Embed(ctx context.Context, model string, inputs []string) ([][]float32, llm.Usage, error) {
	t0 := time.Now()
	out, u, err := b.Backend.Embed(ctx, model, inputs)
	b.mu.Lock()
	b.embeds++
	if err != nil {
		b.embedsFailed++
	}
	d := time.Since(t0)
	b.embedTime += d
	if d > b.slowestEmbed {
		b.slowestEmbed, b.slowestInputs = d, len(inputs)
	}
	b.mu.Unlock()
	return out, u, err
}

func (b *timedBackend) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprintf("%d chat calls in %s; %d embed calls (%d failed) in %s, the slowest %s for %d inputs (calls overlap: the sums can exceed the wall time)",
		b.chats, b.chatTime.Round(time.Millisecond), b.embeds, b.embedsFailed, b.embedTime.Round(time.Millisecond),
		b.slowestEmbed.Round(time.Millisecond), b.slowestInputs)
}
