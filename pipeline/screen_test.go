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
	for _, c := range []rankCase{turingTestCase, turingCompleteCase} {
		got := runRankCase(t, c, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{Random: true, Seed: 1}}, nil)
		t.Logf("%s, random screen: %s; screen %+v", c.name, got, *got.detail.Screen)
		if got.read == 0 || 5*got.readOn < 4*got.read || 5*got.citedOn < 4*got.cited {
			t.Errorf("%s with a random screen: %s; want ≥80%% on topic", c.name, got)
		}
	}
}

// TestScreenPaysForItself: a screen that judges like a careful reader
// rejects the namesake ranking let through (Megatron-Turing NLG), and the
// analysis tokens that saves exceed the screen's own tokens; both are in
// `sessions show --json` ("screen").
func TestScreenPaysForItself(t *testing.T) {
	c := turingTestCase
	smart := &pipelinetest.ScreenScript{OffTopic: func(title string) bool { return !c.on(title) }}
	got := runRankCase(t, c, &pipelinetest.Script{Screen: smart}, nil)
	sr := got.detail.Screen
	if sr == nil {
		t.Fatal("no screen report in the session detail")
	}
	t.Logf("careful screen: %s; screen %+v (own tokens %d, saved %d)", got, *sr, sr.Tokens(), sr.SavedTokens)
	if got.readOn != got.read || got.citedOn < 4 {
		t.Errorf("with a careful screen: %s; want everything read on topic and ≥4 on-topic references", got)
	}
	if sr.Calls == 0 || sr.Rejected == 0 || sr.SavedTokens <= sr.Tokens() {
		t.Errorf("screen %+v: want calls that reject something and save more analysis tokens (%d) than they cost (%d)", *sr, sr.SavedTokens, sr.Tokens())
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
