package report

import (
	"fmt"
	"sort"
	"time"

	"golang.org/x/text/language"
)

// The headings the code writes into a report, in the report's language.

// Headings are the headings the code writes, per language; other
// languages keep the English ones. WhatsNew is an update's heading, %s its
// date.
type Headings struct{ Method, References, Flow, WhatsNew string }

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

// FlowIntro is the PRISMA section's opening sentence in the report's
// language, or in English.
func FlowIntro(tag string) string {
	if s, ok := flowIntros[languageBase(tag)]; ok {
		return s
	}
	return flowIntros[""]
}

var headingsByLanguage = map[string]Headings{
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

// HeadingsFor are the code's headings in the report's language.
func HeadingsFor(tag string) Headings {
	if h, ok := headingsByLanguage[languageBase(tag)]; ok {
		return h
	}
	return headingsByLanguage[""]
}

// WhatsNewHeading is an update's heading in the report's language: its date
// written out in English, as a number (2006-01-02) in other languages,
// whose month names the code does not know.
func WhatsNewHeading(tag string, since time.Time) string {
	h := HeadingsFor(tag)
	date := since.Format("2006-01-02")
	if h == headingsByLanguage[""] {
		date = since.Format("2 January 2006")
	}
	return fmt.Sprintf(h.WhatsNew, date)
}

// ReferencesHeadings are every language's References heading, for the
// code that finds where a report's citations end.
func ReferencesHeadings() []string {
	return headingsOf(func(h Headings) string { return h.References })
}

// MethodHeadings are every language's Method heading.
func MethodHeadings() []string {
	return headingsOf(func(h Headings) string { return h.Method })
}

func headingsOf(f func(Headings) string) []string {
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
