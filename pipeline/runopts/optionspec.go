package runopts

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The run options are declared once, in RunOptions: each entry names an
// option, its type, default and allowed values, its help, its config key,
// and whether the TUI's new-research form and the MCP research tools offer
// it, with how it is read from and written to Options. The faces build
// from the table: the flags of `researchtui run` (and resume and ask), the
// config file's keys (ui/cli), the form's rows (ui), the research tools'
// input schema and overlay (ui/mcp); Normalize checks the allowed values.
// Adding an option is one entry here plus its use in the pipeline.

// OptionType is how an option's value is held and written.
type OptionType int

// The option types, and the Go type of their values (Get, Set, Default).
const (
	OptionString   OptionType = iota // string
	OptionBool                       // bool
	OptionInt                        // int
	OptionList                       // []string
	OptionDuration                   // time.Duration, written "90s", "10m"
)

// OptionSpec declares one run option.
type OptionSpec struct {
	// Name is the flag's name (--name); "" when there is no flag.
	Name string
	// Key is the config file's key and the MCP argument's name; "" when
	// the option is in neither.
	Key  string
	Type OptionType
	// Default is the value when nothing sets it. A string option's is
	// filled in by Normalize when the value is "" (so the faces can tell
	// "not chosen" from a choice, and a flag's default shows nothing);
	// other types start from it (DefaultOptions) and a flag shows it.
	Default any
	// Choices are a string option's allowed values ("" is also allowed
	// and means Default); none: any. Normalize trims and lowercases the
	// value and refuses one not among them.
	Choices []string
	// Check canonicalises and checks a string option's value (for one
	// with no Choices), returning an error wrapping ErrBadInput.
	Check func(string) (string, error)
	// Noun names the option in an error ("--" and the flag's name by
	// default).
	Noun string
	// Help is the flag's help line.
	Help string
	// KeepIfEmpty: a flag or form row given empty leaves the value below
	// it (the config's) rather than setting "".
	KeepIfEmpty bool
	// Repeat: a list option's flag is given once per value (--collection
	// a --collection b) rather than comma-separated.
	Repeat bool
	// Form is the option's row label in the TUI's new-research form; ""
	// not in the form. String options get a one-of row (Choices) or a
	// text row, bool options an off/on row; a few rows have widgets of
	// their own (see ui/dialog_newrun.go).
	Form string
	// Remember: the TUI keeps the form's last choice of the option and
	// starts the next form from it (ui/cli's tui-state.json), over the
	// config's value.
	Remember bool
	// FormChoices are the labels the form shows for Choices, in order
	// (none: the values themselves).
	FormChoices []string
	// Placeholder is a text row's greyed hint.
	Placeholder string
	// Invalid is what the form says of a value Check refuses.
	Invalid string
	// MCP is the research tools' description of the argument (named Key);
	// "" not offered there. An argument left empty leaves the server's
	// default.
	MCP string
	// Resumable: resuming a session honours the option (it chooses how
	// the run reaches its models, not what the run is). Every other
	// option is the session's own, fixed when it started: `resume`
	// refuses it with a message rather than ignoring it.
	Resumable bool
	// FollowUp: a follow-up (`ask`, MCP follow_up) may set the option
	// for its own research; the others stay the session's.
	FollowUp bool
	// Get and Set read and write the option's value on Options, as the
	// type's Go value (see OptionType).
	Access
}

// Access reads and writes one option's value on Options.
type Access struct {
	Get func(*Options) any
	Set func(*Options, any)
}

// FieldAccess is the Access of a field of Options of a type an OptionType
// holds (string, bool, int, []string, time.Duration).
func FieldAccess[T any](field func(*Options) *T) Access {
	return Access{
		Get: func(o *Options) any { return *field(o) },
		Set: func(o *Options, v any) { *field(o) = v.(T) },
	}
}

// RunOptions are the run options, in the order the form shows them (the
// flags are listed sorted, the MCP arguments in this order).
var RunOptions = []OptionSpec{
	{Name: "model", Key: "model", Type: OptionString, KeepIfEmpty: true,
		Help: "chat model (default qwen3:8b, or RESEARCHTUI_MODEL)",
		Form: "Model", Placeholder: "qwen3:8b", Remember: true,
		Access: FieldAccess(func(o *Options) *string { return &o.Model })},
	{Name: "embed-model", Key: "embed_model", Type: OptionString, KeepIfEmpty: true,
		Help:   "embedding model (default nomic-embed-text, or RESEARCHTUI_EMBED_MODEL)",
		Access: FieldAccess(func(o *Options) *string { return &o.EmbedModel })},
	{Name: "backend", Key: "backend", Type: OptionString, KeepIfEmpty: true, Resumable: true,
		Help:   "model backend: ollama|openai",
		Access: FieldAccess(func(o *Options) *string { return &o.Backend })},
	{Name: "depth", Key: "depth", FollowUp: true, Type: OptionString, KeepIfEmpty: true, Noun: "depth",
		Default: DepthStandard, Choices: []string{DepthQuick, DepthStandard, DepthDeep},
		Help: depthHelp(),
		Form: "Depth", Remember: true,
		MCP:    "how thorough: quick (a short cited answer with no reviewer, ~1 min with a local 8B model), standard (a full report, the default) or deep (more sub-questions, sources and follow-up rounds)",
		Access: FieldAccess(func(o *Options) *string { return &o.Depth })},
	{Name: "sources", Key: "sources", FollowUp: true, Type: OptionList, KeepIfEmpty: true,
		Help: "comma-separated sources: " + strings.Join(KnownSources, ",") + " (doctor says which need a key or an address)",
		Form: "Sources", Remember: true, // its own widget: a checklist that knows which sources are off
		MCP: "sources to search, any of " + strings.Join(KnownSources, ", ") + "; omitted: chosen for the question",
		// Naming sources turns the planner's choice off; none turns it on.
		Access: Access{
			Get: func(o *Options) any { return o.Sources },
			Set: func(o *Options, v any) { o.Sources = v.([]string); o.AutoSources = len(o.Sources) == 0 },
		}},
	{Name: "verify", Key: "verify", Type: OptionString,
		Default: VerifyFull, Choices: []string{VerifyFull, VerifyQuick, VerifyOff},
		Help:   "check cited sentences against their sources: full (matching, then the model for the rest; default), quick (matching only), off",
		Form:   "Verify",
		MCP:    "how cited sentences are checked against their sources: full (matching, then the model for what matching cannot decide; the default), quick (matching only, no model calls) or off",
		Access: FieldAccess(func(o *Options) *string { return &o.Verify })},
	{Name: "kind", Key: "kind", Type: OptionString,
		Default: KindStandard, Choices: []string{KindStandard, KindBrief, KindReview},
		Help: "the report: standard (default), brief (a one-screen answer) or review (a literature review with its PRISMA 2020 flow)",
		Form: "Report", Remember: true,
		MCP:    "the report: standard (sections per sub-question; the default), brief (a one-screen answer with its citations) or review (a structured literature review with a PRISMA 2020 flow diagram counted from the run's records)",
		Access: FieldAccess(func(o *Options) *string { return &o.Kind })},
	{Name: "review-plan", Key: "review_plan", Type: OptionString,
		Default: ReviewApprove, Choices: []string{ReviewApprove, ReviewAsk},
		Help: "approve (default: go straight on) or ask: show the plan before anything is searched, to edit it",
		Form: "Plan", Remember: true, FormChoices: []string{"go straight on", "review it first"},
		MCP:    "approve (run the plan as the planner writes it; the default) or ask (put the plan to the person through elicitation before anything is searched: delete, add sub-questions, choose sources)",
		Access: FieldAccess(func(o *Options) *string { return &o.ReviewPlan })},
	{Name: "language", Key: "language", Type: OptionString, Check: NormalizeLanguage,
		Help: "the report's language: a BCP 47 tag (de, pt-BR) or a name (German); default English; searching and references keep the sources' languages",
		Form: "Language", Remember: true, Placeholder: "English (or de, German, pt-BR, …)",
		Invalid: "unknown language: type a tag such as de or pt-BR, or a name such as German",
		MCP:     "the report's language: a BCP 47 tag (de, pt-BR) or a name (German); omitted: English. Searching and the references keep the sources' languages",
		Access:  FieldAccess(func(o *Options) *string { return &o.Language })},
	{Name: "collection", Key: "collections", Type: OptionList, Repeat: true,
		Help:   "limit your library to this collection (repeatable): a library (zotero, a file's name), a collection, a #tag, or corpus for the documents added with corpus add; brings the local source in",
		Form:   "Library", // its own widget: the library's collections, loaded when the form opens
		MCP:    "limit the person's own library (the local source) to these collections: a library (zotero, an imported file's name), a collection, a #tag, or corpus for loose documents; naming one brings the local source in. Omitted: all of it",
		Access: FieldAccess(func(o *Options) *[]string { return &o.Collections })},
	{Name: "max-revisions", Key: "max_revisions", Type: OptionInt, Default: 2,
		Help:   "revision rounds at most",
		Access: FieldAccess(func(o *Options) *int { return &o.MaxRevisions })},
	{Name: "budget-tokens", Key: "budget_tokens", Type: OptionInt,
		Help:   "stop optional work after this many tokens (0: no limit)",
		Access: FieldAccess(func(o *Options) *int { return &o.BudgetTokens })},
	{Name: "deadline", Key: "deadline", Type: OptionDuration,
		Help:   "stop new work after this long (e.g. 90s, 5m) and write from what is analysed",
		Access: FieldAccess(func(o *Options) *time.Duration { return &o.Deadline })},
	{Key: "straggler_grace", Type: OptionDuration, // no flag: a tuning knob of the config file
		Access: FieldAccess(func(o *Options) *time.Duration { return &o.Grace })},
	{Name: "unsupported", Key: "unsupported", Type: OptionString,
		Default: UnsupportedUncite, Choices: []string{UnsupportedUncite, UnsupportedDrop},
		Help:   "a sentence no source supports: uncite (kept, without its citation, as an unsupported statement; default) or drop",
		Access: FieldAccess(func(o *Options) *string { return &o.Unsupported })},
	{Name: "screen", Key: "screen", FollowUp: true, Type: OptionString,
		Choices: []string{ScreenOn, ScreenOff}, // "" stays "": on
		Help:    "on|off: on, the model judges which candidates are on topic and only those are read (default); off, word overlap chooses",
		Access:  FieldAccess(func(o *Options) *string { return &o.Screen })},
	{Name: "rounds", Key: "rounds", Type: OptionInt,
		Help: "follow-up research rounds for what is still missing (default by depth: quick 0, standard 1, deep 2)",
		// nil: by depth.
		Access: Access{
			Get: func(o *Options) any {
				if o.Rounds == nil {
					return 0
				}
				return *o.Rounds
			},
			Set: func(o *Options, v any) { n := v.(int); o.Rounds = &n },
		}},
	{Name: "think", Key: "think", Type: OptionBool,
		Help:   "let models that can think do so (slower; the thinking is shown, never used as output)",
		Access: FieldAccess(func(o *Options) *bool { return &o.Think })},
}

// DefaultOptions are the options before any config, flag or choice: the
// table's defaults of the options that are not strings (a string's is
// filled in by Normalize).
func DefaultOptions() Options {
	var o Options
	for _, s := range RunOptions {
		if s.Type != OptionString && s.Default != nil {
			s.Set(&o, s.Default)
		}
	}
	return o
}

// Label is how an error names the option.
func (s OptionSpec) Label() string {
	switch {
	case s.Noun != "":
		return s.Noun
	case s.Name != "":
		return "--" + s.Name
	}
	return s.Key
}

// Parse reads a value as written outside Go: on a command line (a string,
// a list comma-separated), in the config file or in JSON (strings,
// numbers, booleans, arrays). It returns the type's Go value.
func (s OptionSpec) Parse(raw any) (any, error) {
	bad := func() error {
		return fmt.Errorf("%s = %v is not %s", s.Label(), raw, typeNoun[s.Type])
	}
	switch s.Type {
	case OptionString:
		if v, ok := raw.(string); ok {
			return v, nil
		}
	case OptionBool:
		if v, ok := raw.(bool); ok {
			return v, nil
		}
	case OptionInt:
		switch v := raw.(type) {
		case int:
			return v, nil
		case int64:
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return int(v), nil
			}
		case float64:
			if v == math.Trunc(v) && math.Abs(v) <= math.MaxInt32 {
				return int(v), nil
			}
		}
	case OptionList:
		switch v := raw.(type) {
		case string:
			return strings.Split(v, ","), nil
		case []string:
			return slices.Clone(v), nil
		case []any:
			out := make([]string, 0, len(v))
			for _, e := range v {
				str, ok := e.(string)
				if !ok {
					return nil, bad()
				}
				out = append(out, str)
			}
			return out, nil
		}
	case OptionDuration:
		switch v := raw.(type) {
		case time.Duration:
			return v, nil
		case string:
			v = strings.TrimSpace(v)
			if v == "" {
				return time.Duration(0), nil
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%s %q is not a duration like 90s or 10m", s.durationName(), v)
			}
			return d, nil
		}
	}
	return nil, bad()
}

// durationName is how a duration's parse error names it: by its config
// key, as the config file and the flag share it.
func (s OptionSpec) durationName() string {
	if s.Key != "" {
		return s.Key
	}
	return s.Name
}

var typeNoun = map[OptionType]string{
	OptionString: "a string", OptionBool: "true or false", OptionInt: "a whole number",
	OptionList: "a list of strings", OptionDuration: "a duration like 90s or 10m",
}

// IsEmpty reports whether v is its type's empty value ("", none).
func (s OptionSpec) IsEmpty(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v) == ""
	case []string:
		return len(v) == 0
	}
	return false
}

// normalizeChoices fills and checks the string options with Choices or a
// Check, in the table's order.
func (o *Options) normalizeChoices() error {
	for _, s := range RunOptions {
		if s.Type != OptionString || (len(s.Choices) == 0 && s.Check == nil) {
			continue
		}
		v := s.Get(o).(string)
		if s.Check != nil {
			c, err := s.Check(v)
			if err != nil {
				return err
			}
			s.Set(o, c)
			continue
		}
		v = strings.ToLower(strings.TrimSpace(v))
		switch {
		case v == "":
			if d, ok := s.Default.(string); ok {
				v = d
			}
		case !slices.Contains(s.Choices, v):
			return fmt.Errorf("%w: unknown %s %q (use %s)", ErrBadInput, s.Label(), s.Get(o), orList(s.Choices))
		}
		s.Set(o, v)
	}
	return nil
}

// orList is "a, b or c".
func orList(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// OptionValueFits says whether v is a value of an option of type t (its Go
// type, see OptionType): what a face that stores choices checks before
// Set, which would panic on another type.
func OptionValueFits(t OptionType, v any) bool {
	switch t {
	case OptionString:
		_, ok := v.(string)
		return ok
	case OptionBool:
		_, ok := v.(bool)
		return ok
	case OptionInt:
		_, ok := v.(int)
		return ok
	case OptionList:
		_, ok := v.([]string)
		return ok
	case OptionDuration:
		_, ok := v.(time.Duration)
		return ok
	}
	return false
}

// Accepts says whether v, of the option's type, is a value Normalize
// takes: a string among the Choices (or that Check accepts), source names
// that are known. A face that stores choices (the TUI's remembered form)
// drops what it no longer accepts rather than failing every later start.
func (s OptionSpec) Accepts(v any) bool {
	if !OptionValueFits(s.Type, v) {
		return false
	}
	switch val := v.(type) {
	case string:
		if s.Check != nil {
			_, err := s.Check(val)
			return err == nil
		}
		t := strings.ToLower(strings.TrimSpace(val))
		return t == "" || len(s.Choices) == 0 || slices.Contains(s.Choices, t)
	case []string:
		if s.Key != "sources" {
			return true
		}
		for _, src := range val {
			if t := strings.ToLower(strings.TrimSpace(src)); t != "" && !isKnownSource(t) {
				return false
			}
		}
	}
	return true
}

// depthHelp says what each depth means, from the depth table, so --help
// cannot drift from it.
func depthHelp() string {
	reviewed := func(p DepthPlan) string {
		if p.Review {
			return "reviewed"
		}
		return "no reviewer"
	}
	q, st, d := DepthTable[DepthQuick], DepthTable[DepthStandard], DepthTable[DepthDeep]
	return fmt.Sprintf("quick (%d sub-questions, %d sources, %s), standard (%d, %d, %s; the default) or deep (%d, %d, %s, more follow-up rounds)",
		q.SubQuestions, q.Include, reviewed(q), st.SubQuestions, st.Include, reviewed(st), d.SubQuestions, d.Include, reviewed(d))
}
