package runopts

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// Depth presets.
const (
	DepthQuick    = "quick"
	DepthStandard = "standard"
	DepthDeep     = "deep"
)

// Review modes for runs with no person at the keyboard.
const (
	ReviewApprove = "approve"
	ReviewReject  = "reject"
	ReviewAsk     = "ask"
)

// Report kinds (--kind).
const (
	KindStandard = "standard" // a section per sub-question, consensus, contradictions, gaps
	KindBrief    = "brief"    // a one-screen answer with its citations
	KindReview   = "review"   // a structured literature review with its PRISMA 2020 flow
)

// KnownSources are the names --sources accepts, in the default order:
// the search sources' descriptors (search.Descriptors).
var KnownSources = search.SourceNames()

// MaxQuestionChars bounds a question, in characters (the TUI's line counts
// them too, so a question it takes a run takes): long enough for a paragraph of context,
// short enough that it can't crowd out the evidence in a model's context.
const MaxQuestionChars = 4000

// ErrBadInput marks errors in what the person asked for (exit code 2).
var ErrBadInput = errors.New("bad input")

// Options are what a run was asked to do. They are stored with the session
// so a resume runs with the same settings.
type Options struct {
	Question   string   `json:"question"`
	Model      string   `json:"model"`
	EmbedModel string   `json:"embed_model"`
	Backend    string   `json:"backend,omitempty"`
	Sources    []string `json:"sources"`
	// AutoSources is set when no sources were named: the planner then picks
	// the best few for the question's intent among all available ones.
	AutoSources  bool   `json:"auto_sources,omitempty"`
	Depth        string `json:"depth"`
	MaxRevisions int    `json:"max_revisions"`
	BudgetTokens int    `json:"budget_tokens,omitempty"` // 0: unlimited
	// Think lets models that can think do so (shown apart, never parsed):
	// better answers, many more tokens.
	Think bool `json:"think,omitempty"`
	// MaxSteps bounds the number of model calls in a run (0: by depth).
	MaxSteps int `json:"max_steps,omitempty"`
	// Rounds is how many follow-up research rounds may follow the first
	// (nil: by depth; quick 0, standard 1, deep 2).
	Rounds *int `json:"rounds,omitempty"`
	// Deadline, when set, is how long after its start a run stops
	// starting new work and writes from what is analysed (--deadline).
	Deadline time.Duration `json:"deadline,omitempty"`
	// Verify is how cited sentences are checked against their sources:
	// VerifyFull (default), VerifyQuick (matching only) or VerifyOff.
	Verify string `json:"verify,omitempty"`
	// Unsupported is what becomes of a sentence no source supports:
	// UnsupportedUncite (default: kept without a citation) or
	// UnsupportedDrop.
	Unsupported string `json:"unsupported,omitempty"`
	// Grace is how long a straggling download may hold a sub-question
	// whose other sources are analysed (0: DefaultGrace).
	Grace time.Duration `json:"grace,omitempty"`
	// Screen is "off" to skip the model's relevance screen of what is
	// about to be read (screening.go); anything else is on.
	Screen string `json:"screen,omitempty"`
	// Kind is the report's shape: KindStandard (default), KindBrief or
	// KindReview.
	Kind string `json:"kind,omitempty"`
	// Language is the report's language as a BCP 47 tag ("" English).
	Language string `json:"language,omitempty"`
	// ReviewPlan is ReviewAsk to stop after planning until a person
	// approves or edits the plan; anything else goes straight on.
	ReviewPlan string `json:"review_plan,omitempty"`
	// Collections limit the local source to the person's library
	// collections of these names (a library, a collection, a "#tag", or
	// "corpus" for the loose documents); none: all of it. Naming one
	// brings the local source in.
	Collections []string `json:"collections,omitempty"`

	// normalized is the options' JSON as Normalize left them, so
	// Engine.Start does not normalise again options a face has already
	// checked (to answer bad input before it opens anything); options
	// changed since are normalised again. Not stored.
	normalized string
}

// DepthPlan is what a depth means in numbers.
type DepthPlan struct {
	SubQuestions   int // at most
	ResultsPerCall int // candidates asked of each source per query (over-fetched, then ranked)
	// Include is how many sources the run reads and analyses, for all
	// its sub-questions together (pipeline/reading_plan.go); later rounds add
	// half as many again.
	Include int
	// Shortlist is how many of a sub-question's best candidates the
	// model's relevance screen judges (pipeline/reading_plan.go).
	Shortlist int
	Review    bool
	Concise   bool
	LitReview bool // the writer writes a literature review (KindReview)
	MaxSteps  int
	// Calibrate is how many of a sub-question's best candidates its
	// relevance floor is calibrated on at most (floorCalibration).
	Calibrate int
	// FollowUpRounds is how many research rounds may follow the first
	// (--rounds overrides it).
	FollowUpRounds int
}

// DepthTable is what each depth means in numbers, in one place: the
// reading plan, the floors, the rounds and the step budget all read it.
var DepthTable = map[string]DepthPlan{
	DepthQuick: {SubQuestions: 2, ResultsPerCall: 15, Include: 6, Shortlist: 20, Concise: true,
		MaxSteps: 30, Calibrate: 3, FollowUpRounds: 0},
	DepthStandard: {SubQuestions: 4, ResultsPerCall: 30, Include: 12, Shortlist: 40, Review: true,
		MaxSteps: 100, Calibrate: 5, FollowUpRounds: 1},
	DepthDeep: {SubQuestions: 6, ResultsPerCall: 50, Include: 24, Shortlist: 60, Review: true,
		MaxSteps: 200, Calibrate: 8, FollowUpRounds: 2},
}

// DepthPlan is what the depth means in numbers, with the report kind's say on
// the writing: a brief is concise at any depth, a review never is.
func (o Options) DepthPlan() DepthPlan {
	p := o.DepthRow()
	switch o.Kind {
	case KindBrief:
		p.Concise = true
	case KindReview:
		// A review takes every candidate the screen judges on topic, up
		// to reviewInclude, of a longer shortlist.
		p.Concise, p.LitReview = false, true
		p.Include = max(p.Include, reviewInclude)
		p.Shortlist = max(p.Shortlist, reviewShortlist)
		p.MaxSteps = max(p.MaxSteps, reviewSteps)
	}
	return p
}

// DepthRow is the depth's row of DepthTable (standard for an unknown
// DepthPlan), without the report kind's say.
func (o Options) DepthRow() DepthPlan {
	if p, ok := DepthTable[o.Depth]; ok {
		return p
	}
	return DepthTable[DepthStandard]
}

// StepBudget is the run's bound on model calls: MaxSteps when set, else
// the depth's.
func (o Options) StepBudget() int {
	if o.MaxSteps > 0 {
		return o.MaxSteps
	}
	return o.DepthPlan().MaxSteps
}

// CheckQuestion says why q, normalized, cannot be asked (an error wrapping
// ErrBadInput), or nil: empty, no word, or too long. The faces check a
// question before they start anything with it.
func CheckQuestion(q string) error {
	if q == "" {
		return fmt.Errorf("%w: the question is empty; ask something, e.g. researchtui run \"how do transformers handle long context?\"", ErrBadInput)
	}
	if textkit.LanguageWords(q) == 0 && len(strings.Fields(q)) < 2 {
		// Two letters typed where a key was meant ("gj") would start a
		// whole run: a question has a word of three letters, or two words.
		return fmt.Errorf("%w: %q is no question (one word, of fewer than three letters); ask something, e.g. researchtui run \"how do transformers handle long context?\"", ErrBadInput, textkit.Clip(textkit.StripControls(q), 40))
	}
	if n := utf8.RuneCountInString(q); n > MaxQuestionChars {
		return fmt.Errorf("%w: the question is %d characters; keep it to %d (put background material in a document and add it with `researchtui corpus add`)", ErrBadInput, n, MaxQuestionChars)
	}
	return nil
}

// Normalize fills defaults and checks the options, returning an error
// wrapping ErrBadInput that says what to change. It runs once per run:
// Engine.Start skips options Normalize left unchanged.
func (o *Options) Normalize() error {
	o.normalized = ""
	o.Question = NormalizeQuestion(o.Question)
	if err := CheckQuestion(o.Question); err != nil {
		return err
	}
	if o.MaxRevisions < 0 {
		return fmt.Errorf("%w: --max-revisions must be 0 or more", ErrBadInput)
	}
	if o.Rounds != nil && (*o.Rounds < 0 || *o.Rounds > 5) {
		return fmt.Errorf("%w: --rounds must be between 0 and 5", ErrBadInput)
	}
	if o.Deadline < 0 || o.Grace < 0 {
		return fmt.Errorf("%w: --deadline and the grace period must be positive durations", ErrBadInput)
	}
	if err := o.normalizeChoices(); err != nil { // the table's allowed values (optionspec.go)
		return err
	}
	if o.BudgetTokens < 0 {
		return fmt.Errorf("%w: --budget-tokens must be 0 or more", ErrBadInput)
	}
	// Blank names (--sources "", a trailing comma) name no source: with
	// nothing else named, the planner chooses, as with none.
	o.Sources = slices.DeleteFunc(slices.Clone(o.Sources), func(s string) bool { return strings.TrimSpace(s) == "" })
	if len(o.Sources) == 0 || o.AutoSources {
		o.AutoSources = true
		o.Sources = append([]string(nil), KnownSources...)
	}
	o.Collections = cleanCollections(o.Collections)
	if len(o.Collections) > 0 && !slices.Contains(o.Sources, "local") {
		o.Sources = append(o.Sources, "local")
	}
	seen := map[string]bool{}
	var srcs, unknown []string
	for _, s := range o.Sources {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		if !isKnownSource(s) {
			unknown = append(unknown, strconv.Quote(s))
			continue
		}
		srcs = append(srcs, s)
	}
	if len(unknown) > 0 { // every one named, so one fix does
		noun := "source"
		if len(unknown) > 1 {
			noun = "sources"
		}
		return fmt.Errorf("%w: unknown %s %s (known: %s)", ErrBadInput, noun, strings.Join(unknown, ", "), strings.Join(KnownSources, ","))
	}
	o.Sources = srcs
	if o.Model == "" {
		return fmt.Errorf("%w: no model set", ErrBadInput)
	}
	if o.EmbedModel == "" {
		return fmt.Errorf("%w: no embedding model set", ErrBadInput)
	}
	if raw, err := json.Marshal(o); err == nil {
		o.normalized = string(raw)
	}
	return nil
}

func isKnownSource(s string) bool {
	for _, k := range KnownSources {
		if k == s {
			return true
		}
	}
	return false
}

// NormalizeQuestion strips terminal control sequences and invalid UTF-8
// and collapses whitespace, so a pasted escape sequence can neither reach
// a terminal nor count as a question.
func NormalizeQuestion(q string) string {
	return textkit.CleanLine(q)
}

// cleanCollections trims collection names and drops empty and repeated
// ones (without regard to case).
func cleanCollections(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.Join(strings.Fields(n), " ")
		if n == "" || seen[strings.ToLower(n)] {
			continue
		}
		seen[strings.ToLower(n)] = true
		out = append(out, n)
	}
	return out
}

// IsNormalized reports whether Normalize left the options as they are.
func (o Options) IsNormalized() bool {
	if o.normalized == "" {
		return false
	}
	raw, err := json.Marshal(o)
	return err == nil && string(raw) == o.normalized
}

const (
	// reviewInclude bounds what a literature review includes.
	reviewInclude = 60
	// reviewShortlist is how many of a sub-question's candidates a review
	// has screened.
	reviewShortlist = 120
	// reviewSteps is a review's bound on model calls, room for its
	// analyses.
	reviewSteps = 160
)

// Screen settings (Options.Screen, config key `screen`, --screen).
const (
	ScreenOn  = "on"
	ScreenOff = "off"
)

// Verification modes (--verify).
const (
	VerifyFull  = "full"  // matching, then the model for what matching cannot decide
	VerifyQuick = "quick" // matching only: no model calls
	VerifyOff   = "off"   // no verification (the word-overlap ratio only)
)

// What becomes of a sentence its citations do not support (--unsupported).
const (
	UnsupportedUncite = "uncite" // keep it, without a citation: the report's own synthesis
	UnsupportedDrop   = "drop"   // remove it
)

// Short is how a run is asked where it differs from a standard run in
// English, in a few words for a list's row: "quick", "deep review de",
// "brief pt-BR"; "" for a standard run.
func (o Options) Short() string {
	var parts []string
	if o.Depth != "" && o.Depth != DepthStandard {
		parts = append(parts, o.Depth)
	}
	if o.Kind != "" && o.Kind != KindStandard {
		parts = append(parts, o.Kind)
	}
	if tag, err := NormalizeLanguage(o.Language); err == nil && tag != "" && tag != "en" {
		parts = append(parts, tag)
	}
	return strings.Join(parts, " ")
}

// Summary says in a few words how a run is asked to go, beyond its
// question: its depth, its report's kind and language ("deep · review
// report · in German").
func (o Options) Summary() string {
	parts := []string{textkit.FirstNonEmpty(o.Depth, DepthStandard), textkit.FirstNonEmpty(o.Kind, KindStandard) + " report"}
	if tag, err := NormalizeLanguage(o.Language); err == nil && tag != "" {
		parts = append(parts, "in "+LanguageName(tag))
	}
	return strings.Join(parts, " · ")
}
