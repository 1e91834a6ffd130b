package eval_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// answers are how judges answer, from the one-word answer asked for to
// what small models write instead.
var answers = []struct {
	in   string
	want eval.Verdict
}{
	{"YES", eval.Yes},
	{"No.", eval.No},
	{"**Yes** — the source reports the same figure.", eval.Yes},
	{"<think>The abstract says 73%, so yes.</think>\nYES", eval.Yes},
	{"<think>hmm, no", eval.Unclear}, // cut off while thinking
	{`{"answer": "yes"}`, eval.Yes},
	{`{"supported": false}`, eval.No},
	{"The claim is not supported by the source.", eval.No},
	{"The source supports the claim.", eval.Yes},
	{"Not really; the source is about memory.", eval.No},
	{"The claim appears consistent with the general topic of the source.", eval.Unclear},
	{"Yes and no: it depends.", eval.Yes}, // the first word is the answer
	{"I would say no, although yes in part", eval.Unclear},
	{"", eval.Unclear},
	{"YES\x1b[31m", eval.Yes},
}

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	for _, a := range answers {
		if got := eval.ParseVerdict(a.in); got != a.want {
			t.Errorf("ParseVerdict(%q) = %d, want %d", a.in, got, a.want)
		}
	}
}

// FuzzParseVerdict: any answer a judge writes is read without a panic, as
// one of the three verdicts, the same way each time.
func FuzzParseVerdict(f *testing.F) {
	for _, a := range answers {
		f.Add(a.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := eval.ParseVerdict(s)
		if v != eval.Yes && v != eval.No && v != eval.Unclear {
			t.Fatalf("verdict %d", v)
		}
		if eval.ParseVerdict(s) != v {
			t.Fatal("two readings differ")
		}
	})
}

// judgeServer is a fake judge model speaking Ollama's protocol: it answers
// by reading the source it is shown (yes when the source is the Turing
// test paper, no otherwise), or with ramble, or with a server error.
func judgeServer(t *testing.T, mode string) (*ollamafake.Server, *eval.ModelJudge) {
	t.Helper()
	models := ollamafake.DefaultModels()
	models["judge:7b"] = ollamafake.Model{Family: "qwen3", ContextLength: 8192, Capabilities: []string{"completion"}}
	srv := ollamafake.New(ollamafake.Options{Models: models, Responder: func(c ollamafake.ChatCall) ollamafake.Reply {
		user := c.Messages[len(c.Messages)-1].Content
		switch {
		case mode == "ramble":
			return ollamafake.Reply{Content: "The claim appears consistent with the general topic of the source."}
		case mode == "down":
			return ollamafake.Reply{Status: http.StatusInternalServerError, Error: "model runner crashed"}
		case strings.Contains(user, "Large Language Models Pass the Turing Test"):
			return ollamafake.Reply{Content: "YES"}
		}
		return ollamafake.Reply{Content: "No."}
	}})
	t.Cleanup(srv.Close)
	b, err := llm.NewOllama(srv.URL, llm.OllamaOptions{RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return srv, &eval.ModelJudge{LLM: b, Model: "judge:7b", Seed: 7}
}

// paraphrase says what "Large Language Models Pass the Turing Test" [1]
// reports in other words: too few of its words for the lexical judge.
const paraphrase = "In a three-way chat, people mistook the persona-prompted model for a person most of the time [1]."

func TestModelJudgeAddsParaphrase(t *testing.T) {
	t.Parallel()
	w := openWorld(t)
	body := paraphrase + " People mistook the persona-prompted model for a person most of the time [2]. " +
		"When prompted to adopt a humanlike persona, GPT-4.5 was judged to be the human 73% of the time [1]."
	lexical := eval.Score(eval.TuringTest, w, handReport(body), nil)
	if lexical.CitedSentences != 3 || lexical.Supported != 1 || lexical.SupportedByWords != 1 {
		t.Fatalf("the words alone: %+v; want 1 of 3 supported", lexical)
	}

	srv, judge := judgeServer(t, "")
	r := lexical
	if err := r.JudgeParaphrase(context.Background(), judge); err != nil {
		t.Fatal(err)
	}
	// The paraphrase citing its source is accepted; the same claim citing
	// Neural Turing Machines [2] is not; the supported sentence is not asked.
	if r.Supported != 2 || r.SupportedByJudge != 1 || r.Judged != 2 || r.JudgeUnclear != 0 || r.SupportedShare != 2.0/3 {
		t.Errorf("with the judge: %+v; want 2 of 3 supported, 1 by the judge, 2 judged", r)
	}
	if len(r.Unsupported) != 1 || !strings.Contains(r.Unsupported[0], "persona-prompted") {
		t.Errorf("unsupported %q; want only the sentence citing the wrong work", r.Unsupported)
	}
	calls := srv.ChatCalls()
	if len(calls) != 2 || r.JudgeTokens == 0 {
		t.Fatalf("%d judge calls, %d judge tokens; want 2 calls, counted", len(calls), r.JudgeTokens)
	}
	for _, c := range calls {
		user := c.Messages[len(c.Messages)-1].Content
		if c.Model != "judge:7b" || c.Options["seed"] != float64(7) || !strings.Contains(user, "persona-prompted") || strings.Contains(user, "[1]") {
			t.Errorf("judge call %d: model %s, options %v, prompt %q", c.N, c.Model, c.Options, user)
		}
	}
	// The model under test's own counts are untouched.
	if r.GeneratedTokens != lexical.GeneratedTokens || r.ModelCalls != lexical.ModelCalls {
		t.Errorf("the judge's calls counted as the model's: %+v", r)
	}
}

// A judge that ignores the form, or whose server fails, adds no support
// and says so; only a cancelled eval stops judging.
func TestModelJudgeDegrades(t *testing.T) {
	t.Parallel()
	w := openWorld(t)
	for _, mode := range []string{"ramble", "down"} {
		r := eval.Score(eval.TuringTest, w, handReport(paraphrase), nil)
		_, judge := judgeServer(t, mode)
		if err := r.JudgeParaphrase(context.Background(), judge); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if r.Supported != 0 || r.Judged != 1 || r.JudgeUnclear != 1 || len(r.Unsupported) != 1 {
			t.Errorf("%s: %+v; want unsupported, 1 unclear answer", mode, r)
		}
	}
	r := eval.Score(eval.TuringTest, w, handReport(paraphrase), nil)
	_, judge := judgeServer(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.JudgeParaphrase(ctx, judge); err == nil {
		t.Error("a cancelled eval went on judging")
	}
}

// An eval with a judge names it in its summary and table, and asks it only
// about the sentences the words did not support: here the scripted
// verifier leaves none, so the judge is never called and adds nothing.
// (TestModelJudgeAddsParaphrase covers what it adds when asked.)
func TestEvalWithJudge(t *testing.T) {
	t.Parallel()
	models := ollamafake.DefaultModels()
	models["judge:7b"] = ollamafake.Model{Family: "qwen3", ContextLength: 8192, Capabilities: []string{"completion"}}
	script := &pipelinetest.Script{RevisionRounds: 1}
	respond := script.Responder()
	var judged atomic.Int32
	sum := runOne(t, models, func(c ollamafake.ChatCall) ollamafake.Reply {
		if c.Model == "judge:7b" {
			judged.Add(1)
			return ollamafake.Reply{Content: "Yes."}
		}
		return respond(c)
	}, "judge:7b")
	o, r := sum.Overall, sum.Results[0]
	if !strings.Contains(sum.Judge, "judge:7b") || !strings.HasPrefix(sum.Judge, eval.Judge) || r.Error != "" {
		t.Fatalf("summary judge %q, result %+v", sum.Judge, r)
	}
	rejected := r.CitedSentences - r.SupportedByWords
	if int(judged.Load()) < r.Judged || r.Judged > rejected || r.Supported != r.SupportedByWords+r.SupportedByJudge || o.Judged != r.Judged {
		t.Errorf("%d judge calls for %d rejected sentences; overall %+v; result %+v", judged.Load(), rejected, o, r)
	}
	var table strings.Builder
	if err := eval.WriteTable(&table, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "judge:7b") || !strings.Contains(table.String(), "model judge: ") {
		t.Errorf("the table does not say which judge:\n%s", table.String())
	}
}
