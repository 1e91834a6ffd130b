package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/textkit"
)

// The report's language (--language). Searching stays in the languages
// the sources need and references keep their own; the writer writes the
// report in the language asked, the Method section is translated (its
// numbers checked), and the code's own headings come from a small table.
// Matching compares words, which a translation does not share with its
// English source, so a report in another language has its cited sentences
// judged by the model (verify.go: crossLingual).

// LanguageTag is normalizeLanguage for front-ends that check a language
// as it is typed.
func LanguageTag(s string) (string, error) { return normalizeLanguage(s) }

// normalizeLanguage reads a BCP 47 tag ("de", "pt-BR") or a language's
// name in English or in itself ("German", "Deutsch") and returns the tag,
// "" for English.
func normalizeLanguage(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	tag, err := language.Parse(s)
	if err == nil && display.English.Tags().Name(tag) == "" {
		err = fmt.Errorf("no such language") // well formed ("zz"), but nobody speaks it
	}
	if err != nil {
		var ok bool
		if tag, ok = languageByName(s); !ok {
			return "", fmt.Errorf("%w: unknown --language %q (a BCP 47 tag such as de or pt-BR, or a name such as German)", ErrBadInput, s)
		}
	}
	if base, _ := tag.Base(); base.String() == "en" {
		return "", nil
	}
	return tag.String(), nil
}

// namedLanguages are the languages matched by name.
var namedLanguages = []string{"ar", "bg", "ca", "cs", "da", "de", "el", "es", "et", "fa", "fi", "fr", "he", "hi", "hr", "hu", "id",
	"it", "ja", "ko", "lt", "lv", "ms", "nb", "nl", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sr", "sv", "th", "tr", "uk", "vi", "zh", "en"}

func languageByName(s string) (language.Tag, bool) {
	for _, code := range namedLanguages {
		t := language.MustParse(code)
		if strings.EqualFold(display.English.Tags().Name(t), s) || strings.EqualFold(display.Self.Name(t), s) {
			return t, true
		}
	}
	return language.Und, false
}

// languageName is the tag's name in English ("German"), for prompts.
func languageName(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return tag
	}
	if n := display.English.Tags().Name(t); n != "" {
		return n
	}
	return tag
}

// writeInLanguage is what the writing agents are told when the report
// is not in English: every word of it in that language, citations as
// they are.
func writeInLanguage(tag string) string {
	if tag == "" {
		return ""
	}
	n := languageName(tag)
	return fmt.Sprintf("\nWrite the whole report in %s (%s): its title, headings and prose, even though the sources are in other languages; keep every citation [n] exactly as instructed, and keep the names of methods, datasets and authors as they are.\n", n, tag)
}

const translateSystem = `You are the translating agent of a research assistant. Translate the text the user gives into %s. Keep every number, percentage, name and source name exactly as it is. Answer with the translation only.`

// inLanguage translates code-written text (the Method section) into the
// report's language. A translation that loses or changes a number, or a
// failed call, leaves the text in English: the counts matter more than
// the language.
func (o *orchestrator) inLanguage(ctx context.Context, text string) string {
	if o.opt.Language == "" || strings.TrimSpace(text) == "" || o.meter.exhausted() {
		return text
	}
	name := languageName(o.opt.Language)
	a := o.startAgent(StageFinalise, "translator", "the Method section into "+name)
	resp, err := a.chat(ctx, llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: fmt.Sprintf(translateSystem, name)}, {Role: "user", Content: text}},
		Temperature: ptr(0.1),
	})
	if err != nil {
		a.warn("the Method section stays in English: %s", shortErr(err))
		a.finish("kept in English")
		return text
	}
	out := strings.TrimSpace(textkit.StripControls(stripThink(resp.Content)))
	if !slices.Equal(numbersIn(out), numbersIn(text)) || len(out) < len(text)/3 {
		a.warn("the Method section stays in English: its translation changed the counts")
		a.finish("kept in English")
		return text
	}
	a.finish(fmt.Sprintf("%d words", len(strings.Fields(out))))
	return out
}

var numberRun = regexp.MustCompile(`\d+(?:[.,]\d+)?`)

// numbersIn are the numbers of a text, sorted (a translation may reorder
// them; "3.5" and "3,5" are one number).
func numbersIn(s string) []string {
	ns := numberRun.FindAllString(s, -1)
	for i := range ns {
		ns[i] = strings.ReplaceAll(ns[i], ",", ".")
	}
	sort.Strings(ns)
	return ns
}
