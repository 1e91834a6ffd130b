package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

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

// codeHeadings are the headings the code writes, per language; other
// languages keep the English ones. WhatsNew is an update's heading, %s its
// date.
type codeHeadings struct{ Method, References, Flow, WhatsNew string }

// flowIntros are the sentence that opens the PRISMA section, in the
// languages it has been written in; others keep the English one.
var flowIntros = map[string]string{
	"":   "How the sources of this review were identified, screened and included; every count comes from the run's records.",
	"de": "Wie die Quellen dieser Übersicht identifiziert, gesichtet und eingeschlossen wurden; jede Zahl stammt aus den Aufzeichnungen des Laufs.",
	"fr": "Comment les sources de cette revue ont été identifiées, examinées et incluses ; chaque nombre provient des enregistrements de l'exécution.",
	"es": "Cómo se identificaron, cribaron e incluyeron las fuentes de esta revisión; cada cifra procede de los registros de la ejecución.",
	"it": "Come le fonti di questa revisione sono state identificate, vagliate e incluse; ogni numero proviene dai registri dell'esecuzione.",
	"pt": "Como as fontes desta revisão foram identificadas, triadas e incluídas; cada número vem dos registos da execução.",
	"nl": "Hoe de bronnen van deze review zijn geïdentificeerd, gescreend en geïncludeerd; elk getal komt uit de gegevens van de run.",
}

// languageBase is a language tag's base ("de" for "de-AT"), "" when the
// tag is empty or not a language.
func languageBase(tag string) string {
	if tag == "" {
		return ""
	}
	t, err := language.Parse(tag)
	if err != nil {
		return ""
	}
	base, _ := t.Base()
	return base.String()
}

// flowIntroFor is the PRISMA section's opening sentence in the report's
// language, or in English.
func flowIntroFor(tag string) string {
	if s, ok := flowIntros[languageBase(tag)]; ok {
		return s
	}
	return flowIntros[""]
}

var headingsByLanguage = map[string]codeHeadings{
	"":   {"Method", "References", "PRISMA 2020 flow", "What's new since %s"},
	"de": {"Methode", "Literatur", "PRISMA-2020-Flussdiagramm", "Neu seit %s"},
	"fr": {"Méthode", "Références", "Diagramme de flux PRISMA 2020", "Nouveautés depuis le %s"},
	"es": {"Método", "Referencias", "Diagrama de flujo PRISMA 2020", "Novedades desde el %s"},
	"it": {"Metodo", "Bibliografia", "Diagramma di flusso PRISMA 2020", "Novità dal %s"},
	"pt": {"Método", "Referências", "Fluxograma PRISMA 2020", "Novidades desde %s"},
	"nl": {"Methode", "Literatuur", "PRISMA 2020-stroomdiagram", "Nieuw sinds %s"},
	"pl": {"Metoda", "Bibliografia", "Diagram przepływu PRISMA 2020", "Nowości od %s"},
	"sv": {"Metod", "Referenser", "PRISMA 2020-flödesschema", "Nytt sedan %s"},
	"da": {"Metode", "Referencer", "PRISMA 2020-flowdiagram", "Nyt siden %s"},
	"nb": {"Metode", "Referanser", "PRISMA 2020-flytdiagram", "Nytt siden %s"},
	"fi": {"Menetelmä", "Lähteet", "PRISMA 2020 -vuokaavio", "Uutta %s jälkeen"},
	"cs": {"Metoda", "Literatura", "Vývojový diagram PRISMA 2020", "Novinky od %s"},
	"ru": {"Метод", "Литература", "Блок-схема PRISMA 2020", "Новое с %s"},
	"uk": {"Метод", "Література", "Блок-схема PRISMA 2020", "Нове з %s"},
	"tr": {"Yöntem", "Kaynaklar", "PRISMA 2020 akış diyagramı", "%s tarihinden bu yana yenilikler"},
	"zh": {"方法", "参考文献", "PRISMA 2020 流程图", "自 %s 以来的新进展"},
	"ja": {"方法", "参考文献", "PRISMA 2020 フロー図", "%s 以降の新しい研究"},
	"ko": {"방법", "참고문헌", "PRISMA 2020 흐름도", "%s 이후의 새로운 연구"},
}

// headingsFor are the code's headings in the report's language.
func headingsFor(tag string) codeHeadings {
	if h, ok := headingsByLanguage[languageBase(tag)]; ok {
		return h
	}
	return headingsByLanguage[""]
}

// whatsNewHeading is an update's heading in the report's language: its date
// written out in English, as a number (2006-01-02) in other languages,
// whose month names the code does not know.
func whatsNewHeading(tag string, since time.Time) string {
	h := headingsFor(tag)
	date := since.Format("2006-01-02")
	if h == headingsByLanguage[""] {
		date = since.Format("2 January 2006")
	}
	return fmt.Sprintf(h.WhatsNew, date)
}

// ReferencesHeadings are every language's References heading, for the
// code that finds where a report's citations end.
func ReferencesHeadings() []string {
	return headingsOf(func(h codeHeadings) string { return h.References })
}

// MethodHeadings are every language's Method heading.
func MethodHeadings() []string {
	return headingsOf(func(h codeHeadings) string { return h.Method })
}

func headingsOf(f func(codeHeadings) string) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range headingsByLanguage {
		if s := f(h); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
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
