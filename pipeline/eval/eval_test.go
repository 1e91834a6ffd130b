package eval_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
)

// topics are what the scripted planner writes for each question (a real
// model plans from the question alone).
var topics = map[string]struct {
	topics    []pipelinetest.Topic
	canonical string
}{
	eval.TuringTest.ID: {[]pipelinetest.Topic{
		{Question: "How do large language models and chatbots perform in Turing tests?", Strict: "large language models Turing test", Moderate: "chatbot Turing test", Broad: "Turing test"},
		{Question: "What do Turing tests show about machine intelligence?", Strict: "Turing test machine intelligence", Moderate: "Turing test", Broad: "Turing"},
	}, "Turing test"},
	eval.TuringComplete.ID: {[]pipelinetest.Topic{
		{Question: "Are transformers and recurrent neural networks Turing complete?", Strict: "transformers recurrent neural networks Turing complete", Moderate: "neural network Turing completeness", Broad: "Turing complete"},
		{Question: "What can neural Turing machines compute?", Strict: "neural Turing machines computation", Moderate: "neural Turing machine", Broad: "Turing machine"},
	}, "Turing completeness"},
}

func openWorld(t *testing.T) *eval.World {
	t.Helper()
	w, err := eval.OpenWorld(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// TestGroundTruthIsInTheRecording: in each question's world, every
// on-topic prefix names a recorded work, every fact's sentence is in its
// work's recorded abstract, and every word of the fact is in that sentence.
// The pool questions (labelled by hand for relevance) carry no facts.
func TestGroundTruthIsInTheRecording(t *testing.T) {
	t.Parallel()
	all, err := eval.Select("all,pools")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := eval.OpenWorlds(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for id, n := range map[string]int{eval.TuringWorld: 100, eval.TestingWorld: 10, eval.EditDistanceWorld: 85, eval.KubernetesWorld: 100, eval.TuringPage2World: 100} {
		w, err := ws.For(eval.Question{World: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Papers) != n {
			t.Fatalf("world %s: %d recorded papers, want %d", id, len(w.Papers), n)
		}
	}
	for set, qs := range eval.Sets {
		for _, q := range qs {
			w, err := ws.For(q)
			if err != nil {
				t.Errorf("set %s: %v", set, err)
				continue
			}
			for _, prefix := range q.OnTopic {
				n := 0
				for _, p := range w.Papers {
					if got, ok := q.On(p.Title); ok && got == prefix {
						n++
					}
				}
				if n == 0 {
					t.Errorf("%s: no recorded title starts with %q", q.ID, prefix)
				}
			}
			if set == "pools" {
				if len(q.Facts) != 0 || len(q.OnTopic) < 8 {
					t.Errorf("%s: %d facts and %d on-topic works; a pool question has no facts and at least 8 on-topic works", q.ID, len(q.Facts), len(q.OnTopic))
				}
			} else if len(q.Facts) < 3 || len(q.Facts) > 5 {
				t.Errorf("%s: %d facts, want 3 to 5", q.ID, len(q.Facts))
			}
			for _, f := range q.Facts {
				p := w.Paper(f.Paper)
				if p == nil {
					t.Errorf("%s/%s: no recorded paper %s", q.ID, f.ID, f.Paper)
					continue
				}
				if _, on := q.On(p.Title); !on {
					t.Errorf("%s/%s: %q is not on topic", q.ID, f.ID, p.Title)
				}
				if !strings.Contains(strings.Join(strings.Fields(p.Abstract), " "), f.Sentence) {
					t.Errorf("%s/%s: the sentence is not in the abstract of %q", q.ID, f.ID, p.Title)
				}
				if !eval.States(f.Sentence, f) {
					t.Errorf("%s/%s: the sentence does not state %q", q.ID, f.ID, f.Words)
				}
			}
		}
	}
}

// TestPoolWorldsAnswerTheCitationGraph: a run that follows citations in a
// pool world meets the recorded references and citing works (the eval's
// own recordings), whatever the paper.
func TestPoolWorldsAnswerTheCitationGraph(t *testing.T) {
	t.Parallel()
	for _, id := range []string{eval.TuringWorld, eval.EditDistanceWorld, eval.KubernetesWorld, eval.TuringPage2World} {
		w, err := eval.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		cg, ok := w.Sources(search.NewClient(search.ClientOptions{}))["semanticscholar"].(search.CitationGraph)
		if !ok {
			t.Fatalf("%s: Semantic Scholar follows no citations", id)
		}
		rec := search.Record{S2ID: w.Papers[0].ID}
		refs, err := cg.References(context.Background(), rec, 100)
		if err != nil || len(refs) != 50 {
			t.Errorf("%s: %d references, %v; want the recorded 50", id, len(refs), err)
		}
		cites, err := cg.CitedBy(context.Background(), rec, 100)
		if err != nil || len(cites) != 100 {
			t.Errorf("%s: %d citing works, %v; want the recorded 100", id, len(cites), err)
		}
	}
}

// handReport is a report over the recorded pool: [1] is "Large Language
// Models Pass the Turing Test", [2] "Neural Turing Machines".
func handReport(body string) pipeline.Report {
	return pipeline.Report{
		SessionID: "hand",
		Markdown:  "# A report\n\n" + body + "\n\n## References\n\n1. Someone (2025). Large Language Models Pass the Turing Test.\n",
		Sources: []report.CitedSource{
			{N: 1, Key: "doi:10.48550/arxiv.2503.23674", Title: "Large Language Models Pass the Turing Test", URL: "https://www.semanticscholar.org/paper/66e350075a66ca5fd0c09f20d76aaad2c5c6860c"},
			{N: 2, Key: "s2:c1126fbffd6b8547a44c58b192b36b08b18299de", Title: "Neural Turing Machines", URL: "https://www.semanticscholar.org/paper/c1126fbffd6b8547a44c58b192b36b08b18299de"},
		},
	}
}

func TestScoreHandMadeReport(t *testing.T) {
	t.Parallel()
	w := openWorld(t)
	q := eval.TuringTest

	// The fact stated, citing its source: supported and covered.
	good := eval.Score(q, w, handReport("When prompted to adopt a humanlike persona, GPT-4.5 was judged to be the human 73% of the time [1]."), nil)
	if good.CitedSentences != 1 || good.Supported != 1 || good.FactsCovered != 1 {
		t.Errorf("the fact with its source: %+v; want 1 cited sentence, supported, 1 fact covered", good)
	}
	// The same sentence citing the wrong source: unsupported, and the fact
	// does not count (its source does not hold it).
	wrong := eval.Score(q, w, handReport("When prompted to adopt a humanlike persona, GPT-4.5 was judged to be the human 73% of the time [2]."), nil)
	if wrong.CitedSentences != 1 || wrong.Supported != 0 || wrong.FactsCovered != 0 || len(wrong.Unsupported) != 1 {
		t.Errorf("the fact citing the wrong source: %+v; want unsupported, no fact covered", wrong)
	}
	// A claim no source makes, citing the right work.
	sweeping := eval.Score(q, w, handReport("Every chatbot since 1966 has fooled most judges in every country [1]."), nil)
	if sweeping.Supported != 0 {
		t.Errorf("a sweeping claim: %+v; want unsupported", sweeping)
	}
	// Uncited sentences are not judged; recall and precision come from the
	// reference list: [1] is on topic for this question, [2] is not.
	if good.Cited != 2 || good.CitedOnTopic != 1 || good.Precision != 0.5 || good.OnTopicCited != 1 || good.Recall != 1.0/float64(len(q.OnTopic)) {
		t.Errorf("recall/precision: %+v", good)
	}
	// Citations in a group, and sentences on one line.
	two := eval.Score(q, w, handReport("GPT-4.5 was judged to be the human 73% of the time [1, 2]. Neural networks were coupled to external memory resources [2]."), nil)
	if two.CitedSentences != 2 || two.Supported != 2 {
		t.Errorf("two sentences: %+v; want both supported", two)
	}
}

// TestScoreCountsEvents: tokens and calls from the run's events, a call
// retried counted once per request the backend answered (the planner's
// three attempts here), failed parses and unusable answers per agent.
func TestScoreCountsEvents(t *testing.T) {
	t.Parallel()
	w := openWorld(t)
	evs := []pipeline.Event{
		{Type: pipeline.ModelCalled, Agent: "planner", Usage: &pipeline.UsageTotals{PromptTokens: 100, CompletionTokens: 20}, Call: &pipeline.Call{Operation: "chat", Structured: pipeline.StructuredFallback, Attempts: 3}},
		{Type: pipeline.ModelCalled, Agent: "analyst", Usage: &pipeline.UsageTotals{PromptTokens: 50, CompletionTokens: 5}, Call: &pipeline.Call{Operation: "chat", Structured: pipeline.StructuredOK}},
		{Type: pipeline.ModelCalled, Usage: &pipeline.UsageTotals{EmbeddingTokens: 7}, Call: &pipeline.Call{Operation: "embeddings"}},
		{Type: pipeline.Warning, Agent: "planner", Outcome: pipeline.OutcomeUnusable, Message: "the planner's answer was unusable; searching for the question as asked"},
		{Type: pipeline.Warning, Agent: "reviewer", Message: "a message that says unusable counts nothing without its Outcome"},
		{Type: pipeline.Warning, Message: "a source failed"},
	}
	r := eval.Score(eval.TuringTest, w, handReport(""), evs)
	if r.PromptTokens != 150 || r.GeneratedTokens != 25 || r.ModelCalls != 4 || r.ParseFailures["planner"] != 1 || r.Unusable["planner"] != 1 || len(r.Unusable) != 1 {
		t.Errorf("from events: %+v", r)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	qs, err := eval.Select("")
	if err != nil || len(qs) != 2 || qs[0].ID != "turing-test" || qs[1].ID != "turing-complete" {
		t.Errorf("default set: %v %v", qs, err)
	}
	qs, err = eval.Select("turing-complete,turing-test")
	if err != nil || len(qs) != 2 || qs[0].ID != "turing-complete" {
		t.Errorf("by ID: %v %v", qs, err)
	}
	if _, err := eval.Select("nope"); err == nil || !strings.Contains(err.Error(), "turing") {
		t.Errorf("unknown: %v", err)
	}
	// Sets and IDs mix; each question once, in the order named; the
	// unknown one is the one named in the error.
	qs, err = eval.Select("gui-testing,turing,turing-test")
	if err != nil || len(qs) != 3 || qs[0].ID != "gui-testing" || qs[1].ID != "turing-test" || qs[2].ID != "turing-complete" {
		t.Errorf("a question, then a set: %v %v", qs, err)
	}
	if _, err := eval.Select("turing,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) || strings.Contains(err.Error(), `question "turing"`) {
		t.Errorf("turing,nope: %v", err)
	}
}

// runScripted runs the default set with the scripted model, planning each
// question's topics as the breadth benchmark does.
func runScripted(t *testing.T, script func(q eval.Question) *pipelinetest.Script) eval.Summary {
	t.Helper()
	w := openWorld(t)
	qs, _ := eval.Select(eval.DefaultSet)
	var results []eval.Result
	for _, q := range qs {
		s := script(q)
		s.Topics, s.Canonical = topics[q.ID].topics, topics[q.ID].canonical
		oll := ollamafake.New(ollamafake.Options{Responder: s.Responder(), TokensByChars: s.Realistic})
		t.Cleanup(oll.Close)
		b, err := llm.NewOllama(oll.URL, llm.OllamaOptions{RequestTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		setup := eval.Setup{LLM: b, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Dir: t.TempDir()}
		sum, err := eval.Run(context.Background(), setup, w, []eval.Question{q}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, sum.Results...)
	}
	return eval.Summary{Results: results, Overall: eval.Total(results)}
}

func checkShape(t *testing.T, r eval.Result) {
	t.Helper()
	in01 := func(v float64) bool { return v >= 0 && v <= 1 }
	if r.Error != "" || r.Session == "" || !in01(r.Recall) || !in01(r.Precision) || !in01(r.SupportedShare) ||
		r.FactsCovered > r.Facts || r.Supported > r.CitedSentences || r.Cited == 0 || r.CitedSentences == 0 ||
		r.GeneratedTokens <= 0 || r.PromptTokens <= r.GeneratedTokens || r.ModelCalls <= 0 || r.WallSeconds <= 0 {
		t.Errorf("%s: %+v", r.Question, r)
	}
}

// TestEvalScriptedModel runs the default set with the scripted model: the
// numbers have their shape, and a careful scripted model scores well.
// EVAL_LOG=1 logs the results (the README's baseline row).
func TestEvalScriptedModel(t *testing.T) {
	t.Parallel()
	sum := runScripted(t, func(eval.Question) *pipelinetest.Script {
		return &pipelinetest.Script{RevisionRounds: 1, Realistic: true, ByReference: true}
	})
	for _, r := range sum.Results {
		checkShape(t, r)
		if os.Getenv("EVAL_LOG") != "" {
			t.Logf("%+v", r)
		}
	}
	o := sum.Overall
	if o.Runs != 2 || o.Failed != 0 || o.Recall < 0.4 || o.Precision < 0.8 || o.SupportedShare < 0.8 || o.FactsCovered == 0 {
		t.Errorf("overall %+v; want recall ≥ 0.4, precision ≥ 0.8, ≥ 80%% of cited sentences supported, some facts", o)
	}
	if os.Getenv("EVAL_LOG") != "" {
		var b strings.Builder
		sum.Model, sum.EmbedModel, sum.Backend, sum.World, sum.Judge, sum.Threshold = "scripted "+pipelinetest.Model, pipelinetest.EmbedModel, "ollamafake", eval.WorldName, eval.Judge, eval.SupportThreshold
		if err := eval.WriteTable(&b, sum); err != nil {
			t.Fatal(err)
		}
		t.Logf("overall %+v\n%s", o, b.String())
	}
}
