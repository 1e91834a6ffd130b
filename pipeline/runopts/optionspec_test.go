package runopts

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A run option added to the table, here by a test, is checked by
// Normalize: its default filled in, a value off its choices refused.
func TestNormalizeChecksATableAddedOption(t *testing.T) {
	var tone string
	old := RunOptions
	t.Cleanup(func() { RunOptions = old })
	RunOptions = append(RunOptions[:len(RunOptions):len(RunOptions)], OptionSpec{
		Name: "tone", Key: "tone", Type: OptionString, Default: "plain", Choices: []string{"plain", "formal"},
		Access: Access{Get: func(*Options) any { return tone }, Set: func(_ *Options, v any) { tone = v.(string) }},
	})
	o := Options{Question: "why?", Model: "m", EmbedModel: "e"}
	if err := o.Normalize(); err != nil || tone != "plain" {
		t.Fatalf("Normalize: %v, tone %q; want the default plain", err, tone)
	}
	tone = " Formal"
	if err := o.Normalize(); err != nil || tone != "formal" {
		t.Fatalf("Normalize: %v, tone %q; want formal", err, tone)
	}
	tone = "shouty"
	if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), `unknown --tone "shouty" (use plain or formal)`) {
		t.Fatalf("Normalize of a tone off the table: %v", err)
	}
}

// The table's allowed values are what Normalize accepts, and the errors
// name the option as before.
func TestNormalizeChoicesFromTheTable(t *testing.T) {
	for _, c := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.Depth = "bottomless" }, `unknown depth "bottomless" (use quick, standard or deep)`},
		{func(o *Options) { o.Kind = "epic" }, `unknown --kind "epic" (use standard, brief or review)`},
		{func(o *Options) { o.ReviewPlan = "later" }, `unknown --review-plan "later" (use approve or ask)`},
		{func(o *Options) { o.Verify = "twice" }, `unknown --verify "twice" (use full, quick or off)`},
		{func(o *Options) { o.Unsupported = "keep" }, `unknown --unsupported "keep" (use uncite or drop)`},
		{func(o *Options) { o.Screen = "maybe" }, `unknown --screen "maybe" (use on or off)`},
	} {
		o := Options{Question: "why?", Model: "m", EmbedModel: "e"}
		c.set(&o)
		if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	o := Options{Question: "why?", Model: "m", EmbedModel: "e"}
	if err := o.Normalize(); err != nil {
		t.Fatal(err)
	}
	if o.Depth != DepthStandard || o.Kind != KindStandard || o.ReviewPlan != ReviewApprove || o.Verify != VerifyFull || o.Unsupported != UnsupportedUncite || o.Screen != "" {
		t.Errorf("defaults %+v", o)
	}
	if d := DefaultOptions(); d.MaxRevisions != 2 || d.Rounds != nil {
		t.Errorf("DefaultOptions %+v", d)
	}
}

// Normalize runs once: options it left as they are count as normalised
// (Engine.Start skips them); changed ones do not.
func TestNormalizedOnce(t *testing.T) {
	o := Options{Question: "  why?  ", Model: "m", EmbedModel: "e"}
	if o.IsNormalized() {
		t.Fatal("fresh options count as normalised")
	}
	if err := o.Normalize(); err != nil {
		t.Fatal(err)
	}
	if !o.IsNormalized() {
		t.Fatal("normalised options do not count as such")
	}
	c := o
	if !c.IsNormalized() {
		t.Error("a copy of normalised options does not count as such")
	}
	c.Question = "  another?\x1b[2J"
	if c.IsNormalized() {
		t.Error("options changed after Normalize count as normalised")
	}
}

// Every depth a person can choose has its row in the depth table, and a
// deeper run never does less than a shallower one: more sub-questions,
// sources, candidates screened, rounds and model calls.
func TestEveryDepthHasItsRow(t *testing.T) {
	var choices []string
	for _, o := range RunOptions {
		if o.Name == "depth" {
			choices = o.Choices
		}
	}
	if len(choices) != len(DepthTable) {
		t.Fatalf("depth choices %v, table rows %d: each choice needs one row", choices, len(DepthTable))
	}
	var prev DepthPlan
	for i, d := range choices {
		p, ok := DepthTable[d]
		if !ok {
			t.Fatalf("depth %q has no row in DepthTable", d)
		}
		if i > 0 && (p.SubQuestions < prev.SubQuestions || p.Include < prev.Include || p.Shortlist < prev.Shortlist ||
			p.Calibrate < prev.Calibrate || p.FollowUpRounds < prev.FollowUpRounds || p.MaxSteps < prev.MaxSteps) {
			t.Errorf("depth %q does less than %q: %+v after %+v", d, choices[i-1], p, prev)
		}
		if got := (Options{Depth: d}).DepthRow(); got != p {
			t.Errorf("depth %q reads %+v, not its row %+v", d, got, p)
		}
		prev = p
	}
}

// Every unknown source is named at once, so one fix does.
func TestEveryUnknownSourceIsNamed(t *testing.T) {
	o := Options{Question: "why?", Model: "m", EmbedModel: "e", Sources: []string{"arxiv", "bogus", "foo", "BOGUS"}}
	err := o.Normalize()
	if err == nil || !strings.Contains(err.Error(), `unknown sources "bogus", "foo" (known: arxiv,`) {
		t.Errorf("Normalize: %v", err)
	}
	o.Sources = []string{"myspace"}
	if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), `unknown source "myspace" (known:`) {
		t.Errorf("Normalize: %v", err)
	}
}

func TestNormalizeQuestionStripsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"  what\tis\n\nthis?  ":            "what is this?",
		"\x1b]0;pwned\x07title \x1b[2Jnow": "title now",
		"\x1b[31m\x1b[0m":                  "",
	} {
		if got := NormalizeQuestion(in); got != want {
			t.Errorf("normalizeQuestion(%q) = %q, want %q", in, got, want)
		}
	}
}

// --sources "" or "," names no source: the planner chooses, as with none,
// instead of a run that searches nothing and fails.
func TestBlankSourcesAreNone(t *testing.T) {
	for _, given := range [][]string{{""}, {" "}, {"", ""}} { // "", " ", ","
		o := Options{Question: "why?", Model: "m", EmbedModel: "e", Sources: given}
		if err := o.Normalize(); err != nil {
			t.Fatalf("%q: %v", given, err)
		}
		if !o.AutoSources || !slices.Equal(o.Sources, KnownSources) {
			t.Errorf("%q: auto %v, sources %v; want the planner's choice of all", given, o.AutoSources, o.Sources)
		}
	}
	o := Options{Question: "why?", Model: "m", EmbedModel: "e", Sources: []string{"", "arxiv"}}
	if err := o.Normalize(); err != nil || o.AutoSources || !slices.Equal(o.Sources, []string{"arxiv"}) {
		t.Errorf("\"\" beside arxiv: %v, auto %v, %v", err, o.AutoSources, o.Sources)
	}
}

// The question's bound counts characters, as the TUI's line does: 3,900
// German characters (4,776 bytes) are a question, 4,001 are too many.
func TestQuestionBoundCountsCharacters(t *testing.T) {
	o := Options{Question: strings.Repeat("ü", 3900), Model: "m", EmbedModel: "e"}
	if err := o.Normalize(); err != nil {
		t.Errorf("3,900 characters (%d bytes) refused: %v", len(o.Question), err)
	}
	o = Options{Question: strings.Repeat("a", MaxQuestionChars+1), Model: "m", EmbedModel: "e"}
	if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), "4001 characters") {
		t.Errorf("4,001 characters: %v", err)
	}
}

// Two letters typed on the question line where a key was meant ("gj")
// are refused with a reason, not run as research (trial); short real
// questions, and questions in scripts written without spaces, are taken.
func TestAQuestionHasAWord(t *testing.T) {
	for q, ok := range map[string]bool{"gj": false, "jj": false, "?!": false, "q?": false,
		"why?": true, "CRISPR?": true, "Is AI ok?": true, "Is it": true, "机器学习是什么": true} {
		o := Options{Question: q, Model: "m", EmbedModel: "e"}
		err := o.Normalize()
		if (err == nil) != ok || (err != nil && (!errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "is no question"))) {
			t.Errorf("%q: %v, want taken %v", q, err, ok)
		}
	}
}
