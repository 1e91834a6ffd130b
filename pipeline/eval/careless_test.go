package eval_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"

	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// A model made careless in each of the ways real small models are moves
// the eval's scores the way a person choosing a model needs them to move,
// each against the same careful scripted model.
func TestEvalScoresMoveWithCarelessModels(t *testing.T) {
	t.Parallel()
	careful := runScripted(t, func(eval.Question) *pipelinetest.Script {
		return &pipelinetest.Script{RevisionRounds: 1}
	}).Overall

	// A writer that misattributes (every third sentence cites the
	// neighbouring source, every fifth claims what no source says): the
	// verifier has more to repair.
	t.Run("misattributes", func(t *testing.T) {
		o := runScripted(t, func(eval.Question) *pipelinetest.Script {
			return &pipelinetest.Script{RevisionRounds: 1, Careless: true}
		}).Overall
		if o.Repaired <= careful.Repaired {
			t.Errorf("repaired per run: careless %.1f, careful %.1f; want more", o.Repaired, careful.Repaired)
		}
	})

	// The same writer with a verifier that lets everything through: the
	// eval's own judge, not the pipeline's verdict, finds the unsupported
	// sentences.
	t.Run("misattributes unchecked", func(t *testing.T) {
		o := runScripted(t, func(eval.Question) *pipelinetest.Script {
			return &pipelinetest.Script{RevisionRounds: 1, Careless: true, Paraphrase: true, VerifierJudges: pipelinetest.JudgeNothing}
		}).Overall
		if o.SupportedShare >= careful.SupportedShare {
			t.Errorf("supported: unchecked careless %.2f, careful %.2f; want lower", o.SupportedShare, careful.SupportedShare)
		}
	})

	// An analyst that ignores the answer's form (a sentence of its own
	// where an excerpt's reference was asked, slots by name): its answers
	// cannot be traced to the text, so the pipeline asks again and falls
	// back. The report keeps its quality; the eval shows the price: the
	// analyst's unusable answers, more calls, more tokens.
	t.Run("ignores the reference form", func(t *testing.T) {
		o := runScripted(t, func(eval.Question) *pipelinetest.Script {
			return &pipelinetest.Script{RevisionRounds: 1, Batch: pipelinetest.BatchSentences}
		}).Overall
		if o.ParseFailures["analyst"]+o.Unusable["analyst"] == 0 || o.ModelCalls <= careful.ModelCalls || o.PromptTokens <= careful.PromptTokens {
			t.Errorf("form ignored: %+v\ncareful: %+v\nwant the analyst's unusable answers counted, more calls and tokens", o, careful)
		}
	})

	// An analyst whose batched answers are broken JSON: counted per agent.
	t.Run("writes junk JSON", func(t *testing.T) {
		o := runScripted(t, func(eval.Question) *pipelinetest.Script {
			return &pipelinetest.Script{RevisionRounds: 1, Batch: pipelinetest.BatchJunk}
		}).Overall
		if len(careful.ParseFailures) != 0 || o.ParseFailures["analyst"]+o.Unusable["analyst"] == 0 {
			t.Errorf("unparsable answers: careful %v, junk %v / %v; want none, then the analyst's", careful.ParseFailures, o.ParseFailures, o.Unusable)
		}
	})
}

// A model that answers no chat call (an embedding model asked to chat, a
// server that errs): the pipeline still assembles a report from the
// abstracts, which would score well; the eval counts the run as failed
// instead, with the reason, and scores it zero.
func TestEvalModelThatAnswersNothingFails(t *testing.T) {
	t.Parallel()
	sum := runOne(t, nil, func(c ollamafake.ChatCall) ollamafake.Reply {
		return ollamafake.Reply{Status: http.StatusBadRequest, Error: `"` + c.Model + `" does not support chat`}
	}, "")
	r, o := sum.Results[0], sum.Overall
	if !strings.Contains(r.Error, "answered none of its") || !strings.Contains(r.Error, "does not support chat") || o.Failed != 1 ||
		r.Recall != 0 || r.Precision != 0 || o.Recall != 0 || r.FailedCalls == 0 || r.FailedCalls != r.ModelCalls {
		t.Errorf("a model that answers nothing: %+v\noverall %+v", r, o)
	}
	// A failed run has no report: not an assembled one (issue 48: `eval
	// --json` said "assembled": true and the table printed the footnote).
	var table strings.Builder
	if err := eval.WriteTable(&table, sum); err != nil {
		t.Fatal(err)
	}
	if r.Assembled || o.Assembled != 0 || strings.Contains(table.String(), "assembled the report") {
		t.Errorf("a failed run is called assembled: %+v\n%s", r, table.String())
	}
}

// A writer whose drafts are unusable: the pipeline assembles the report
// from the analyses, and the eval marks the run so a person does not read
// the fallback's scores as the model's.
func TestEvalMarksAssembledReports(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	respond := script.Responder()
	sum := runOne(t, nil, func(c ollamafake.ChatCall) ollamafake.Reply {
		if pipelinetest.KindOf(c) == pipelinetest.Writer {
			return ollamafake.Reply{Content: "ok"}
		}
		return respond(c)
	}, "")
	if r := sum.Results[0]; !r.Assembled || r.Error != "" || sum.Overall.Assembled != 1 {
		t.Fatalf("an assembled report: %+v", r)
	}
	var table strings.Builder
	if err := eval.WriteTable(&table, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "turing-complete*") || !strings.Contains(table.String(), "* 1 run: the writer's drafts were unusable") {
		t.Errorf("the table does not mark the assembled run:\n%s", table.String())
	}
	careful := runScripted(t, func(eval.Question) *pipelinetest.Script { return &pipelinetest.Script{RevisionRounds: 1} }).Overall
	if careful.Assembled != 0 {
		t.Errorf("the careful model's reports counted as assembled: %+v", careful)
	}
}

// runOne runs turing-complete once against a fake model server that
// answers with respond (models: the server's; nil, its defaults), judged
// by the model named judge too unless it is "".
func runOne(t *testing.T, models map[string]ollamafake.Model, respond ollamafake.Responder, judge string) eval.Summary {
	t.Helper()
	srv := ollamafake.New(ollamafake.Options{Models: models, Responder: respond})
	t.Cleanup(srv.Close)
	b, err := llm.NewOllama(srv.URL, llm.OllamaOptions{RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := eval.Setup{LLM: b, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Dir: t.TempDir()}
	if judge != "" {
		s.Judge = &eval.ModelJudge{LLM: b, Model: judge}
	}
	sum, err := eval.Run(context.Background(), s, openWorld(t), []eval.Question{eval.TuringComplete}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// A failed run's error quotes the model server; the table prints it
// without its escape sequences.
func TestTableCleansAFailedRunsError(t *testing.T) {
	t.Parallel()
	sum := eval.Summary{Results: []eval.Result{{Question: "q", Run: 1, Error: "server said \x1b]8;;http://evil\x07click\x1b]8;;\x07 \x1b[31mno"}}}
	sum.Overall = eval.Total(sum.Results)
	var b strings.Builder
	if err := eval.WriteTable(&b, sum); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || !strings.Contains(b.String(), "q run 1: server said") {
		t.Errorf("the table: %q", b.String())
	}
}
