package pipeline_test

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

func warnedAbout(evs []pipeline.Event, text string) bool {
	for _, ev := range evs {
		if ev.Type == pipeline.Warning && strings.Contains(ev.Message, text) {
			return true
		}
	}
	return false
}

func readTitles(cs []pipeline.Candidate) map[string]bool {
	m := map[string]bool{}
	for _, c := range cs {
		if c.Read {
			m[c.Title] = true
		}
	}
	return m
}

// competent is a screen that judges from c's ground truth, wrong on
// about one title in ten.
func competent(c rankCase) *pipelinetest.ScreenScript {
	return &pipelinetest.ScreenScript{OffTopic: func(title string) bool { return !c.on(title) }, ErrorRate: 0.1, Seed: 7}
}

// TestTheScreenDecidesWhatIsRead: a screen that judges like a competent
// reader decides what is read: nothing it judged off topic is read,
// reading goes well past what the words alone would have chosen ("Does
// GPT-4 pass the Turing test?" shares fewer words with the question than
// "ChatGPT and Software Testing Education"), and the screen's cost is
// bounded: every shortlisted candidate in a few calls, each answering
// the shorter list. All of it is in `sessions show --json`.
func TestTheScreenDecidesWhatIsRead(t *testing.T) {
	t.Parallel()
	c := turingTestCase
	got := runRankCase(t, c, &pipelinetest.Script{Screen: competent(c), Realistic: true, ByReference: true}, nil)
	sr := got.detail.Screen
	if sr == nil {
		t.Fatal("no screen report in the session detail")
	}
	t.Logf("competent screen: %s; screen %+v", got, *sr)
	if readable := readableOnTopic(c); 10*got.citedOn < 7*readable || 100*got.citedOn < 85*got.cited {
		t.Errorf("competent screen: %s; want recall ≥0.7 of the %d readable on-topic works, precision ≥0.85", got, readable)
	}
	for _, cd := range got.cands {
		if strings.HasPrefix(cd.Screen, "off topic") && cd.Read {
			t.Errorf("%q judged off topic but read", cd.Title)
		}
	}
	if sr.Screened < 2*got.read || sr.OnTopic == 0 || sr.Rejected == 0 || len(sr.Fallbacks) != 0 {
		t.Errorf("screen %+v for %d read: want every shortlisted candidate judged, both verdicts, no fallback", *sr, got.read)
	}
	// A first look (80 candidates a call), a second and a third at the
	// verdicts that decide: at most three calls per sub-question and
	// round. Sub-questions whose searches end close together share their
	// calls; on a loaded machine they end apart and are screened apart
	// (9 calls for 2 sub-questions over 2 rounds, where 6 is usual), so
	// the bound does not assume they share.
	subqs := max(1, len(got.rep.Funnel.BySubQ))
	if n := calls(got.env, pipelinetest.Screener); n != sr.Calls || n > 3*(subqs*len(got.rep.Rounds)+sr.Screened/80) {
		t.Errorf("%d screener calls (report: %d) over %d rounds of %d sub-questions for %d candidates", n, sr.Calls, len(got.rep.Rounds), subqs, sr.Screened)
	}
	// The shorter list is answered: generation stays small.
	if sr.CompletionTokens > 8*sr.Screened {
		t.Errorf("the screen generated %d tokens for %d candidates", sr.CompletionTokens, sr.Screened)
	}
	byq := got.rep.Funnel.BySubQ
	if len(byq) == 0 || byq[0].Screened == 0 || byq[0].OnTopic == 0 || !strings.Contains(got.rep.Markdown, "judged on topic") {
		t.Errorf("per sub-question screen counts %+v; Method must give them", byq)
	}
}

// TestAScreenWithoutJudgementFallsBackToTheWords: a screen that judges
// every candidate on topic, though their words separate them, or that
// answers junk, cannot judge: reading is chosen by the floors, as with
// --screen off, and the Method section says why.
func TestAScreenWithoutJudgementFallsBackToTheWords(t *testing.T) {
	t.Parallel()
	c := turingTestCase
	base := runRankCase(t, c, &pipelinetest.Script{}, func(o *runopts.Options) { o.Screen = runopts.ScreenOff })
	if n := calls(base.env, pipelinetest.Screener); n != 0 {
		t.Errorf("--screen off made %d screener calls", n)
	}
	want := readTitles(base.cands)
	for name, sc := range map[string]*pipelinetest.ScreenScript{"all on topic": {}, "junk": {Junk: true}} {
		got := runRankCase(t, c, &pipelinetest.Script{Screen: sc}, nil)
		t.Logf("%s: %s; screen %+v", name, got, *got.detail.Screen)
		if r := readTitles(got.cands); len(r) != len(want) {
			t.Errorf("%s: read %d; want %d, as the words choose", name, len(r), len(want))
		}
		if 100*got.citedOn < 100*base.citedOn*got.cited/max(1, base.cited) {
			t.Errorf("%s: precision %d/%d below the words' %d/%d", name, got.citedOn, got.cited, base.citedOn, base.cited)
		}
		if len(got.detail.Screen.Fallbacks) == 0 || !strings.Contains(got.rep.Markdown, "reading was chosen by word overlap") {
			t.Errorf("%s: fallbacks %q; the Method section must say the words chose", name, got.detail.Screen.Fallbacks)
		}
	}
}

// TestARejectionStands: a screen that judges every candidate of a
// sub-question off topic is a verdict: nothing overrules it, and a run in
// which it rejects everything says so instead of reading namesakes. An
// answer of bare numbers is understood.
func TestARejectionStands(t *testing.T) {
	t.Parallel()
	c := turingTestCase
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{Topics: c.topics, Canonical: c.canonical, Screen: &pipelinetest.ScreenScript{RejectAll: true}}, "")
	env.Engine.Sources["semanticscholar"] = c.rankedS2(t, env.Client, 0)
	opt := env.Options(c.question)
	opt.Sources = []string{"semanticscholar"}
	r, err := env.Engine.Start(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for range r.Events() {
	}
	if _, err := r.Wait(); err == nil || !strings.Contains(err.Error(), "judged none of") {
		t.Errorf("a screen that rejects everything: %v; want the run to say the screen judged none on topic", err)
	}
	plain := runRankCase(t, c, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{Plain: true, OffTopic: func(title string) bool { return strings.Contains(title, "Megatron") }}}, nil)
	if plain.detail.Screen.Rejected == 0 || plain.read == 0 {
		t.Errorf("an answer of bare numbers was not understood: %+v", *plain.detail.Screen)
	}
}

// TestAFollowUpAddsNothingOffTopic: a follow-up over the same world is
// screened like the run (the session's verdicts hold, new candidates are
// judged). Its research for the gap ("Turing test chatbots") meets what
// the run left unread, namesakes (software testing) among them: what it
// adds is on topic, and it adds something.
func TestAFollowUpAddsNothingOffTopic(t *testing.T) {
	t.Parallel()
	c := turingTestCase
	got := runRankCase(t, c, &pipelinetest.Script{Screen: competent(c), GapQueries: []string{"Turing test chatbots"}, FollowUpTopics: []pipelinetest.Topic{
		{Question: "Which reverse or inverted variants of the imitation game have been proposed?", Strict: "reverse Turing test variants", Moderate: "inverted Turing test", Broad: "Turing test"},
	}}, nil)
	before := map[string]bool{}
	for _, s := range got.rep.Sources {
		before[s.Title] = true
	}
	r, err := got.env.Engine.Ask(t.Context(), got.rep.SessionID, "Which reverse or inverted variants of the imitation game have been proposed?", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range pipelinetest.Drive(t, r, nil) {
		if ev.Type == pipeline.CandidatesRanked {
			t.Logf("%s: %s", ev.Agent, ev.Message)
		}
	}
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	after, err := pipeline.LoadReport(got.env.Store, got.rep.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	added := 0
	for _, s := range after.Sources {
		if before[s.Title] {
			continue
		}
		added++
		if !c.on(s.Title) {
			t.Errorf("the follow-up added %q, off topic", s.Title)
		}
	}
	t.Logf("the follow-up added %d sources", added)
	if added == 0 {
		t.Error("the follow-up added nothing: the test shows nothing")
	}
}

// TestWhatItsAnalystFindsOffTopicIsNotCited: a namesake that the screen
// let through on every look (a stubborn screen, wrong on one title in
// five) is read, and its analyst, having read it, gives it the confidence
// of an off-topic source: the report does not cite it, and C says why.
func TestWhatItsAnalystFindsOffTopicIsNotCited(t *testing.T) {
	t.Parallel()
	c := turingTestCase
	sc := &pipelinetest.ScreenScript{OffTopic: func(title string) bool { return !c.on(title) }, ErrorRate: 0.2, Seed: 3, Stubborn: true}
	blind := runRankCase(t, c, &pipelinetest.Script{Screen: sc, Realistic: true, ByReference: true}, nil)
	judging := *sc
	judging.Reads = true
	got := runRankCase(t, c, &pipelinetest.Script{Screen: &judging, Realistic: true, ByReference: true}, nil)
	t.Logf("analyst without judgement: %s; off topic cited %q", blind, blind.offCited)
	t.Logf("analyst who judges: %s; off topic cited %q", got, got.offCited)
	if len(blind.offCited) == 0 {
		t.Fatal("the stubborn screen let no namesake through: the test shows nothing")
	}
	if len(got.offCited) >= len(blind.offCited) {
		t.Errorf("an analyst who judges left %d off-topic works cited, as many as one who does not (%d)", len(got.offCited), len(blind.offCited))
	}
	cited := map[string]bool{}
	for _, s := range got.rep.Sources {
		cited[s.Title] = true
	}
	for _, cd := range got.cands {
		if cd.Read && !c.on(cd.Title) && !cited[cd.Title] && !strings.Contains(cd.Reason, "analyst's confidence") {
			t.Errorf("%q was read and left out, but C says %q", cd.Title, cd.Reason)
		}
	}
}
