package pipeline_test

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
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

// TestScreenWithoutJudgementLeavesRankingToDoTheWork: a screen that answers
// at random carries no judgement; what is read stays on topic because
// ranking and floors chose it, and the screen can only have removed some.
func TestScreenWithoutJudgementLeavesRankingToDoTheWork(t *testing.T) {
	// Over both questions: a random screen's luck on one question of a
	// few sources (one namesake of four) says nothing about ranking.
	var read, readOn, cited, citedOn int
	for _, c := range []rankCase{turingTestCase, turingCompleteCase} {
		got := runRankCase(t, c, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{Random: true, Seed: 1}}, nil)
		t.Logf("%s, random screen: %s; screen %+v", c.name, got, *got.detail.Screen)
		if got.read == 0 {
			t.Errorf("%s with a random screen: nothing read", c.name)
		}
		read, readOn, cited, citedOn = read+got.read, readOn+got.readOn, cited+got.cited, citedOn+got.citedOn
	}
	if 5*readOn < 4*read || 5*citedOn < 4*cited {
		t.Errorf("with a random screen: read %d/%d, cited %d/%d on topic; want ≥80%%", readOn, read, citedOn, cited)
	}
}

// TestScreenRejectsNamesakesAtABoundedCost: a screen that judges like a careful reader
// rejects the namesake ranking let through (Megatron-Turing NLG), and the
// screen's cost is bounded; both are in
// `sessions show --json` ("screen").
func TestScreenRejectsNamesakesAtABoundedCost(t *testing.T) {
	c := turingTestCase
	smart := &pipelinetest.ScreenScript{OffTopic: func(title string) bool { return !c.on(title) }}
	got := runRankCase(t, c, &pipelinetest.Script{Screen: smart, Realistic: true, ByReference: true}, nil)
	sr := got.detail.Screen
	if sr == nil {
		t.Fatal("no screen report in the session detail")
	}
	t.Logf("careful screen: %s; screen %+v (own tokens %d, saved %d)", got, *sr, sr.Tokens(), sr.SavedTokens)
	if got.readOn != got.read || got.citedOn < 4 {
		t.Errorf("with a careful screen: %s; want everything read on topic and ≥4 on-topic references", got)
	}
	// On one GPU (BenchmarkOneGPU's world: 0.3 s to the first token,
	// prefill at 1,500 tokens/s, 20 ms a generated token). Abstracts are
	// analysed in shared calls for ~20 generated tokens each, so a screen
	// no longer pays for itself in time by the analyses it saves: it is
	// there for precision (the namesake above is not read), and its cost
	// is bounded: one call for the sub-questions searched together and at
	// most one for the reading plan's fill, per round.
	cost := 0.3*float64(sr.Calls) + float64(sr.PromptTokens)/worldPrefill + 0.02*float64(sr.CompletionTokens)
	perAnalysis := float64(sr.AnalysisTokensPerSource-sr.AnalysisGeneratedPerSource)/worldPrefill + 0.02*float64(sr.AnalysisGeneratedPerSource)
	t.Logf("one GPU: the screen cost %.2f s and saved %.2f s of analyses", cost, float64(sr.Rejected)*perAnalysis)
	if sr.Calls == 0 || sr.Rejected == 0 || sr.Calls > 2*len(got.rep.Rounds) {
		t.Errorf("screen %+v over %d rounds: want calls that reject something, at most two a round", *sr, len(got.rep.Rounds))
	}
	for _, cd := range got.cands {
		if strings.HasPrefix(cd.Screen, "off topic") && cd.Read {
			t.Errorf("%q judged off topic but read", cd.Title)
		}
	}
	if n := calls(got.env, pipelinetest.Screener); n != sr.Calls {
		t.Errorf("%d screener calls, report says %d", n, sr.Calls)
	}
}

// TestScreenJunkAndRejectAll: a screen that answers junk, or says no to
// everything, cannot make a first round read nothing: junk is ignored
// (candidates are read as ranked, with a warning) and a first round's
// blanket rejection is overruled because the floors say the candidates are
// relevant. A later round's rejections count (reading nothing more is
// cheap). --screen off asks no screen at all.
func TestScreenJunkAndRejectAll(t *testing.T) {
	c := turingTestCase
	base := runRankCase(t, c, &pipelinetest.Script{}, func(o *pipeline.Options) { o.Screen = pipeline.ScreenOff })
	if n := calls(base.env, pipelinetest.Screener); n != 0 {
		t.Errorf("--screen off made %d screener calls", n)
	}
	want := readTitles(base.cands)

	junk := runRankCase(t, c, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{Junk: true}}, nil)
	if got := readTitles(junk.cands); len(got) != len(want) || !warnedAbout(junk.events, "relevance screen gave no usable answer") {
		t.Errorf("junk screen: read %d (want %d as ranked), warned %v", len(got), len(want), warnedAbout(junk.events, "relevance screen"))
	}

	no := runRankCase(t, c, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{RejectAll: true}}, nil)
	if got := readTitles(no.cands); len(got) != len(want) || no.detail.Screen.Overruled == 0 || !warnedAbout(no.events, "they clear the relevance floor, so they are read anyway") {
		t.Errorf("reject-all screen: read %d (want %d), screen %+v", len(got), len(want), *no.detail.Screen)
	}
	if no.citedOn < 4 {
		t.Errorf("reject-all screen: %s", no)
	}
	plain := runRankCase(t, c, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{Plain: true, OffTopic: func(title string) bool { return strings.Contains(title, "Megatron") }}}, nil)
	if plain.detail.Screen.Rejected == 0 {
		t.Errorf("an answer of bare numbers was not understood: %+v", *plain.detail.Screen)
	}
}
