package pipeline_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/testkit/hostileweb"
	"github.com/researchtui/researchtui/textkit/mdinert"
)

// TestHostileWebResultsDontHoldTheRun: the recorded SearxNG answer's first
// results are pointed at hostile bodies. The run reads around them: no body
// is fetched twice, the drip is given up as stalled, and a report is made.
// With RESEARCHTUI_REAL_PROGRESS=1 the download rule is the real one (15 s
// to a first byte, 160 KiB per 10 s) and the test logs the wall time.
func TestHostileWebResultsDontHoldTheRun(t *testing.T) {
	t.Parallel()
	hostile := hostileweb.New(t)
	hits := hostile.Hits
	recorded, err := os.ReadFile("../search/testdata/searxng/search-q-python-format-json.json")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"https://www.python.org/about/gettingstarted/":               hostile.URL + "/drip.html",
		"https://wiki.nerdvpn.de/wiki/Python_(programming_language)": hostile.URL + "/endless.html",
		"https://docs.python.org/3/tutorial/index.html":              hostile.URL + "/endless.pdf",
		"https://www.python.org/downloads/":                          hostile.URL + "/bomb.html",
	}
	body := string(recorded)
	for from, to := range links {
		body = strings.Replace(body, `"`+from+`"`, `"`+to+`"`, 1)
	}
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer searx.Close()

	script := &pipelinetest.Script{Topics: []pipelinetest.Topic{
		{Question: "Where is Python downloaded, taught to beginners in a tutorial, and described as a programming language?", Strict: "python programming language tutorial download beginners", Moderate: "python download tutorial", Broad: "python"},
	}, Canonical: "python"}
	env := pipelinetest.NewEnv(t, script, "")
	env.Client.SetHostLimit(strings.TrimPrefix(hostile.URL, "http://"), 0)
	rule := search.ProgressRule{FirstByte: 2 * time.Second, Window: time.Second, MinBytes: 8 << 10}
	if os.Getenv("RESEARCHTUI_REAL_PROGRESS") == "1" {
		rule = search.DefaultProgress
	}
	env.Engine.Sources["web"] = search.NewWeb(env.Client, search.WebOptions{SearxNGURL: searx.URL})
	env.Engine.Fetcher = search.NewFetcher(env.Client, search.FetchOptions{AllowPrivate: true, Progress: rule})
	opt := env.Options("What is the Python programming language?")
	opt.Sources, opt.Depth = []string{"web"}, runopts.DepthDeep
	start := time.Now()
	evs, _ := pipelinetest.RunToEnd(t, env, opt)
	t.Logf("the run took %s with the %v download rule", time.Since(start).Round(time.Millisecond), rule)
	read := 0
	for _, p := range []string{"/drip.html", "/endless.html", "/endless.pdf", "/bomb.html"} {
		if n := hits(p); n > 1 {
			t.Errorf("%s was fetched %d times", p, n)
		} else {
			read += n
		}
	}
	t.Logf("hostile links fetched: drip %d, endless page %d, endless pdf %d, gzip bomb %d", hits("/drip.html"), hits("/endless.html"), hits("/endless.pdf"), hits("/bomb.html"))
	if read < 3 {
		t.Fatalf("only %d of the hostile links were read; the test needs them chosen", read)
	}
	if hits("/drip.html") == 1 {
		stalled := false
		for _, ev := range evs {
			if ev.Type == pipeline.DocumentRead && strings.Contains(ev.Message, "stalled at") {
				stalled = true
			}
		}
		if !stalled {
			t.Error("the drip's source does not say it stalled")
		}
	}
}

func TestHostileModelOutputNeverReachesTheReport(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("Software testing research compares techniques on real systems and reports how well each finds faults [1]. ", 4)
	hostile := "# Title\x1b]0;pwned\x07\n\n## Executive summary\n\nTesting is studied \x1b[2Jwidely [1].\n\n  - indented \u009b31m item\n\n" + prose + "\n"
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{Faults: []pipelinetest.Fault{
		{Kind: pipelinetest.Writer, Nth: 1, Reply: ollamafake.Reply{Content: hostile}},
	}}, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(rep.Markdown, "\x1b\x07\u009b") {
		t.Errorf("control characters survived: %q", rep.Markdown)
	}
	// (The verifier takes [1] off the first sentence: source 1 does not say it.)
	if !strings.Contains(rep.Markdown, "Testing is studied widely") || !strings.Contains(rep.Markdown, "\n  - indented  item") {
		t.Errorf("the text around the escapes was damaged: %q", rep.Markdown)
	}
}

// TestModelMarkdownReachesTheReportInert: images, links and raw HTML that
// the planner (title, sub-questions, slots) and the writer write, hidden
// behind what line toggles took for fences ("```x```", an indented
// fence), reach the report as text: a Markdown viewer loads and follows
// nothing (issue 48).
func TestModelMarkdownReachesTheReportInert(t *testing.T) {
	t.Parallel()
	img := "![p](http://host.example/p.png)"
	plan := `{"title":"Testing ` + img + `","intent":"cs_physics","canonical_term":"testing","sub_questions":[` +
		`{"question":"Which software testing techniques are studied <img src=http://host.example/q.png>?","queries":{"strict":"software testing techniques","moderate":"software testing","broad":"testing"},"slots":["key findings","<img src=x>"]}]}`
	prose := strings.Repeat("Software testing research compares techniques on real systems and reports how well each finds faults [1]. ", 4)
	writer := "# Testing " + img + "\n\n## Executive summary\n\nTesting is studied widely [1].\n```x```\n" + img + " <img src=http://host.example/i.png> [click](http://host.example/c)\n\n    ```\n\n" +
		img + "\n\n[r]: http://host.example/r\n\n" + prose + "\n"
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{Faults: []pipelinetest.Fault{
		{Kind: pipelinetest.Planner, Nth: 1, Reply: ollamafake.Reply{Content: plan}},
		{Kind: pipelinetest.Writer, Nth: 1, Reply: ollamafake.Reply{Content: writer}},
	}}, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := mdinert.Active(rep.Markdown); len(got) > 0 {
		t.Errorf("the report has %v:\n%s", got, rep.Markdown)
	}
	if !strings.Contains(report.PlainReference(rep.Markdown), img) {
		t.Errorf("the writer's words are gone:\n%s", rep.Markdown)
	}
}

// With Think, a thinking model thinks: its thoughts stream apart and never
// reach the report or the parsed answers.
func TestThinkingIsShownButNeverParsed(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{}, "")
	opt := env.Options(question)
	opt.Think = true
	evs, sess := pipelinetest.RunToEnd(t, env, opt)
	thought := ""
	for _, ev := range evs {
		if ev.Type == pipeline.TokenDelta {
			thought += ev.Thinking
		}
	}
	if !strings.Contains(thought, "organise the sources") {
		t.Error("the writer's thinking was not streamed")
	}
	asked := 0
	for _, c := range env.Ollama.ChatCalls() {
		if c.Think {
			asked++
		}
	}
	if asked == 0 {
		t.Error("no call asked the thinking model to think")
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if strings.Contains(rep.Markdown, "organise the sources") {
		t.Error("thinking leaked into the report")
	}
}

// A model whose every answer is nonsense in valid JSON (as tiny or broken
// models write) still yields a usable report: the plan falls back to the
// question, and the draft is assembled from the sources.
func TestNonsenseAnswersStillMakeAReport(t *testing.T) {
	t.Parallel()
	junkPlan := `{"title":"}k wz} sd]","intent":"general","canonical_term":"]]","sub_questions":[{"question":"\"]}d}","queries":{"strict":"}{","moderate":"]]","broad":"{"}}]}`
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{Faults: []pipelinetest.Fault{
		{Kind: pipelinetest.Planner, Nth: 1, Reply: ollamafake.Reply{Content: junkPlan}},
		{Kind: pipelinetest.Planner, Nth: 2, Reply: ollamafake.Reply{Content: junkPlan}},
		{Kind: pipelinetest.Writer, Nth: 1, Reply: ollamafake.Reply{Content: `"]}d}`}},
		{Kind: pipelinetest.Writer, Nth: 2, Reply: ollamafake.Reply{Content: "}k wz} sd] x}q"}},
	}}, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options("How is software testing studied?"))
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Title != "How is software testing studied?" || sess.Title != rep.Title {
		t.Errorf("title %q / %q, want the question", rep.Title, sess.Title)
	}
	if len(rep.Sources) == 0 || !strings.Contains(rep.Markdown, "## References") || strings.Contains(rep.Markdown, "wz}") {
		t.Errorf("no usable report:\n%s", rep.Markdown)
	}
}

// nothingFound is a source whose every search finds nothing, as an API
// does for a question outside its field.
type nothingFound struct{ name string }

// TestAPlannerThatEchoesItsInstructions (issue 47 #14): a planner that
// answers with its own prompt's sentences is asked again, and when it
// does so again the run searches for the question as asked and says so,
// instead of searching for "You are the planning agent…".
func TestAPlannerThatEchoesItsInstructions(t *testing.T) {
	t.Parallel()
	echo := `{"title":"Plan","intent":"general","canonical_term":"research","sub_questions":[` +
		`{"question":"You are the planning agent of a research assistant that searches scholarly databases?","queries":{"strict":"planning agent research assistant","moderate":"planning agent"},"slots":["key findings"]},` +
		`{"question":"Which search strings use no boolean operators, no quotes?","queries":{"strict":"boolean operators quotes","moderate":"boolean operators"},"slots":["key findings"]}]}`
	var faults []pipelinetest.Fault
	for n := 1; n <= 4; n++ {
		faults = append(faults, pipelinetest.Fault{Kind: pipelinetest.Planner, Nth: n, Reply: ollamafake.Reply{Content: echo}})
	}
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{Faults: faults}, "")
	evs, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	raw, ok, err := env.Store.Checkpoint(sess.ID, "plan")
	var p pipeline.Plan
	if err != nil || !ok || json.Unmarshal(raw, &p) != nil {
		t.Fatalf("no plan checkpoint: %v", err)
	}
	for _, sq := range p.SubQuestions {
		if strings.Contains(sq.Question, "planning agent") || strings.Contains(sq.Question, "boolean") {
			t.Errorf("the run searched for the planner's instructions: %q", sq.Question)
		}
	}
	warned := false
	for _, ev := range evs {
		if ev.Type == pipeline.Warning && strings.Contains(ev.Message, "searching for the question as asked") {
			warned = true
		}
	}
	if !p.Degraded || !warned {
		t.Errorf("the plan %+v (degraded %v), warned %v", p.SubQuestions, p.Degraded, warned)
	}
}
