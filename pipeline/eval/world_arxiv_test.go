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
)

// testingTopics are what the scripted planner writes for GUITesting.
var testingTopics = []pipelinetest.Topic{
	{Question: "What automated techniques exist for testing graphical user interfaces?", Strict: "automated GUI testing techniques", Moderate: "GUI testing", Broad: "software testing"},
	{Question: "How are web applications and mobile apps tested automatically?", Strict: "automated web application mobile app testing", Moderate: "web mobile testing", Broad: "testing"},
}

func openTesting(t *testing.T) *eval.World {
	t.Helper()
	w, err := eval.Open(context.Background(), eval.TestingWorld)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// scriptedSetup is the scripted model s behind the fake Ollama.
func scriptedSetup(t *testing.T, s *pipelinetest.Script) eval.Setup {
	t.Helper()
	oll := ollamafake.New(ollamafake.Options{Responder: s.Responder(), TokensByChars: s.Realistic})
	t.Cleanup(oll.Close)
	b, err := llm.NewOllama(oll.URL, llm.OllamaOptions{RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return eval.Setup{LLM: b, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Dir: t.TempDir()}
}

// TestScoreOnTheArxivWorld: the scorer finds a cited arXiv record in the
// recording by its arXiv key or abs URL, or by its DOI, and reads its
// recorded abstract.
func TestScoreOnTheArxivWorld(t *testing.T) {
	t.Parallel()
	w := openTesting(t)
	q := eval.GUITesting
	rep := pipeline.Report{
		SessionID: "hand",
		Markdown: "# A report\n\nTesting techniques which implement symbolic execution tend to be more effective than those implementing random test generation [1]. " +
			"Selenium is the most widely used tool for web testing [2].\n\n## References\n\n1. A review.\n2. A tool study.\n",
		Sources: []report.CitedSource{
			{N: 1, Key: "arxiv:1812.11470", Title: "A Systematic Literature Review of Automated Techniques for Functional GUI Testing of Mobile Applications", URL: "https://arxiv.org/abs/1812.11470v1"},
			{N: 2, Key: "doi:10.1145/3533767.3534401", Title: "Automated Test Generation for REST APIs: No Time to Rest Yet"},
		},
	}
	r := eval.Score(q, w, rep, nil)
	// [1] is on topic and states a fact; [2], found by its DOI, is off
	// topic, and its abstract does not name Selenium.
	if r.Cited != 2 || r.CitedOnTopic != 1 || r.OnTopicCited != 1 || r.FactsCovered != 1 || r.CitedSentences != 2 || r.Supported != 1 {
		t.Errorf("%+v; want 2 cited, 1 on topic, 1 fact covered, 1 of 2 sentences supported", r)
	}
	if p := w.Find("doi:10.1145/3533767.3534401", "", "10.1145/3533767.3534401", ""); p == nil || p.ID != "2204.08348" {
		t.Errorf("by DOI: %+v", p)
	}
	if p := w.Find("", "", "", "a survey on web testing: on the rise of AI and applications in industry"); p == nil || p.ID != "2503.05378" {
		t.Errorf("by title: %+v", p)
	}
}

// TestRunPicksEachQuestionsWorld: Run asks each question in its own world
// and the summary names both; a world that is not the question's stops the
// eval before any run.
func TestRunPicksEachQuestionsWorld(t *testing.T) {
	t.Parallel()
	qs := []eval.Question{eval.TuringComplete, eval.GUITesting}
	ws, err := eval.OpenWorlds(context.Background(), qs)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	setup := scriptedSetup(t, &pipelinetest.Script{RevisionRounds: 1})
	if _, err := eval.Run(context.Background(), setup, openTesting(t), qs, 1, nil); err == nil || !strings.Contains(err.Error(), eval.TuringWorld) {
		t.Errorf("turing-complete in the arXiv world: %v", err)
	}
	sum, err := eval.Run(context.Background(), setup, ws, qs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.World, eval.WorldName) || !strings.Contains(sum.World, eval.TestingWorldName) {
		t.Errorf("the summary's world is %q; want both worlds named", sum.World)
	}
	if len(sum.Results) != 2 {
		t.Fatalf("%d results, want 2", len(sum.Results))
	}
	for _, r := range sum.Results {
		if r.Error != "" || r.Cited == 0 {
			t.Errorf("%s: %+v", r.Question, r)
		}
	}
	// The arXiv run cited works of the arXiv recording, which the turing
	// world does not hold.
	if r := sum.Results[1]; r.CitedOnTopic == 0 {
		t.Errorf("gui-testing cited no on-topic work: %+v", r)
	}
}

// TestEvalScriptedModelOnArxiv runs the arXiv world's question end to end
// with the scripted model, as TestEvalScriptedModel runs the default set:
// the numbers have their shape, and a careful model finds and cites the
// on-topic works and states what they say. EVAL_LOG=1 logs the table.
func TestEvalScriptedModelOnArxiv(t *testing.T) {
	t.Parallel()
	qs, err := eval.Select("testing")
	if err != nil || len(qs) != 1 || qs[0].ID != eval.GUITesting.ID {
		t.Fatalf("the testing set: %v %v", qs, err)
	}
	ws, err := eval.OpenWorlds(context.Background(), qs)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s := &pipelinetest.Script{RevisionRounds: 1, Realistic: true, ByReference: true, Topics: testingTopics, Canonical: "GUI testing"}
	sum, err := eval.Run(context.Background(), scriptedSetup(t, s), ws, qs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.World != eval.TestingWorldName {
		t.Errorf("world %q, want %q", sum.World, eval.TestingWorldName)
	}
	for _, r := range sum.Results {
		checkShape(t, r)
	}
	o := sum.Overall
	if o.Runs != 1 || o.Failed != 0 || o.Recall == 0 || o.Precision == 0 || o.SupportedShare < 0.5 {
		t.Errorf("overall %+v; want on-topic works cited (recall, precision above 0) and most cited sentences supported", o)
	}
	if os.Getenv("EVAL_LOG") != "" {
		var b strings.Builder
		sum.Model, sum.EmbedModel, sum.Backend = "scripted "+pipelinetest.Model, pipelinetest.EmbedModel, "ollamafake"
		if err := eval.WriteTable(&b, sum); err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v\n%s", sum.Results[0], b.String())
	}
}
