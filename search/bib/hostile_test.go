package bib

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/researchtui/researchtui/textkit"
)

// Macros that double at each step would expand to 2^40 bytes: the
// expansion budget stops them with a problem, in bounded memory.
func TestMacroBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`@string{m0 = "` + strings.Repeat("x", 1024) + `"}` + "\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "@string{m%d = m%d # m%d}\n", i, i-1, i-1)
	}
	b.WriteString("@article{bomb, title = m40}\n@article{after, title = {Fine}}\n")
	items, errs := ReadBibTeX([]byte(b.String()), "")
	if len(errs) == 0 {
		t.Fatal("no problem reported for the macro bomb")
	}
	for _, it := range items {
		if len(it.Title) > maxLine*4 {
			t.Errorf("%s has a %d-byte title", it.ID, len(it.Title))
		}
	}
	eq(t, "the entry after", items[len(items)-1].Title, "Fine")
}

// More than MaxItems entries: the first MaxItems are read, the rest is one
// problem.
func TestTooManyEntries(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := 0; i <= MaxItems; i++ {
		fmt.Fprintf(&b, "@misc{k%d, title={T}}\n", i)
	}
	items, errs := ReadBibTeX(b.Bytes(), "")
	eq(t, "items", len(items), MaxItems)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "more than 100000 entries") {
		t.Errorf("problems = %v", errs)
	}
	b.Reset()
	for i := 0; i <= MaxItems; i++ {
		b.WriteString("TY  - GEN\nER  - \n")
	}
	items, errs = ReadRIS(b.Bytes())
	eq(t, "RIS items", len(items), MaxItems)
	eq(t, "RIS problems", len(errs), 1)
}

// Terminal escape sequences, controls and bidirectional overrides are
// removed from every field, whatever the format; one-line fields stay on
// one line.
func TestHostileText(t *testing.T) {
	t.Parallel()
	evil := "Red\x1b[31m alert\x1b[0m\x1b]0;pwned\x07 \u202eevil\u202c\x00\x08 done\r\nsecond line"
	check := func(t *testing.T, items []Item) {
		t.Helper()
		if len(items) == 0 {
			t.Fatal("no items")
		}
		it := items[0]
		eq(t, "title", it.Title, "Red alert evil done second line")
		eq(t, "author", it.Authors[0].Family, "Red alert evil done second line")
		eq(t, "abstract keeps its line", it.Abstract, "Red alert evil done\nsecond line")
		validItem(t, it)
	}
	t.Run("BibTeX", func(t *testing.T) {
		items, _ := ReadBibTeX([]byte("@article{k, title = {"+evil+"}, author = {{"+evil+"}}, abstract = {"+evil+"}}"), "")
		items[0].Authors[0].Family = items[0].Authors[0].Literal
		check(t, items)
	})
	t.Run("RIS", func(t *testing.T) {
		items, _ := ReadRIS([]byte("TY  - JOUR\nTI  - " + strings.ReplaceAll(evil, "\r\n", " ") + "\nAU  - " +
			strings.ReplaceAll(evil, "\r\n", " ") + ", X\nAB  - " + evil + "\nER  - \n"))
		check(t, items)
	})
	t.Run("CSL-JSON", func(t *testing.T) {
		qb, _ := json.Marshal(evil)
		q := string(qb)
		items, err := ReadCSLJSON([]byte(`[{"title": ` + q + `, "author": [{"family": ` + q + `}], "abstract": ` + q + `}]`))
		if err != nil {
			t.Fatal(err)
		}
		check(t, items)
	})
}

// Bytes that are not UTF-8 are read as Windows-1252 (JabRef's Cp1252 and
// old Latin-1 files); UTF-16 with a byte-order mark is read as such.
func TestEncodings(t *testing.T) {
	t.Parallel()
	items, _ := ReadBibTeX([]byte("@article{k, author = {M\xfcller, J\xf6rg}, title = {\x93Quoted\x94 \x96 caf\xe9}}"), "")
	eq(t, "cp1252 name", items[0].Authors[0], Name{Family: "Müller", Given: "Jörg"})
	eq(t, "cp1252 title", items[0].Title, "“Quoted” – café")
	u16 := []byte{0xff, 0xfe}
	for _, r := range "@article{k, title = {Grüße}}" {
		u16 = append(u16, byte(r), byte(r>>8))
	}
	items, _ = ReadBibTeX(u16, "")
	eq(t, "UTF-16 title", items[0].Title, "Grüße")
	items, _ = ReadRIS([]byte("\xef\xbb\xbfTY  - JOUR\nTI  - With a BOM\nER  - \n"))
	eq(t, "BOM", items[0].Title, "With a BOM")
}

func TestHugeValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", maxValue+10)
	items, errs := ReadBibTeX([]byte("@article{big, title = {"+long+"}}\n@article{ok, title = {OK}}\n"), "")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "longer than 1 MB") {
		t.Errorf("problems = %v", errs)
	}
	eq(t, "the next entry", items[0].ID, "ok")
	items, _ = ReadBibTeX([]byte("@article{k, abstract = {"+strings.Repeat("word ", 100_000)+"}, title = {"+strings.Repeat("t", 10_000)+"}}"), "")
	eq(t, "abstract capped", utf8.RuneCountInString(items[0].Abstract) <= maxText, true)
	eq(t, "title capped", utf8.RuneCountInString(items[0].Title), maxLine)
	names := strings.Repeat("A, B and ", maxNames+50) + "C, D"
	items, _ = ReadBibTeX([]byte("@article{k, author = {"+names+"}}"), "")
	eq(t, "authors capped", len(items[0].Authors), maxNames)
}

// Many broken entries cost linear time (line numbers are counted forward
// only) and give a bounded report.
func TestManyBrokenEntries(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := 0; i < 50_000; i++ {
		fmt.Fprintf(&b, "@article{k%d,\n title {x}\n}\n", i)
	}
	start := time.Now()
	items, errs := ReadBibTeX(b.Bytes(), "")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("50,000 broken entries took %v", d)
	}
	eq(t, "items", len(items), 0)
	eq(t, "problems listed", len(errs), maxProblems+1)
	eq(t, "summary", errs[len(errs)-1].Error(), "49900 more entries that could not be read, not listed")
	eq(t, "line of the last listed", errs[maxProblems-1].(*ParseError).Line, 3*maxProblems-2)
}

// A value continued over a million lines is built once, not copied at
// every line, and capped.
func TestRISLongContinuation(t *testing.T) {
	t.Parallel()
	src := "TY  - JOUR\nAB  - start\n" + strings.Repeat("x\n", 1_000_000) + "TI  - T\nER  - \n"
	start := time.Now()
	items, _ := ReadRIS([]byte(src))
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	eq(t, "title", items[0].Title, "T")
	eq(t, "abstract capped", utf8.RuneCountInString(items[0].Abstract) <= maxText, true)
}

// Old EndNote on the Mac ends lines with CR alone.
func TestCarriageReturnLines(t *testing.T) {
	t.Parallel()
	items, errs := ReadRIS([]byte("TY  - JOUR\rTI  - From a Mac\rER  - \r"))
	noErrors(t, errs)
	eq(t, "title", items[0].Title, "From a Mac")
}

// validItem checks what every reader promises of every item: valid UTF-8,
// no controls, one-line fields on one line.
func validItem(t testing.TB, it Item) {
	t.Helper()
	oneLine := []string{it.ID, it.Type, it.Title, it.Date, it.Venue, it.Volume, it.Issue, it.Pages, it.Publisher,
		it.DOI, it.ISBN, it.ISSN, it.URL, it.Language}
	for _, n := range append(append([]Name{}, it.Authors...), it.Editors...) {
		oneLine = append(oneLine, n.Family, n.Given, n.Literal, n.Suffix)
	}
	oneLine = append(oneLine, it.Tags...)
	oneLine = append(oneLine, it.Collections...)
	oneLine = append(oneLine, it.Files...)
	for _, s := range oneLine {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return isControl(r) || r == '\n' || r == '\t' }) {
			t.Errorf("item %q has a bad one-line field %q", it.ID, s)
		}
	}
	if !utf8.ValidString(it.Abstract) || strings.ContainsFunc(it.Abstract, func(r rune) bool { return isControl(r) || r == '\t' }) {
		t.Errorf("item %q has a bad abstract %q", it.ID, it.Abstract)
	}
	if it.Type == "" {
		t.Errorf("item %q has no type", it.ID)
	}
}

// CleanLine's shortcut for clean fields gives what the full rule gives.
func FuzzCleanLine(f *testing.F) {
	for _, s := range []string{"", "a", " a", "a ", "a  b", "a b", "a\tb", "é ü", "a\u00a0b", "a\u2028b", "x\x1b[31m", "\xff", "a\u202eb", "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := Truncate(strings.Join(strings.Fields(textkit.StripControls(s)), " "), maxLine)
		if got := CleanLine(s); got != want {
			t.Errorf("CleanLine(%q) = %q, want %q", s, got, want)
		}
		lines := strings.Split(textkit.StripControls(s), "\n")
		if !strings.Contains(s, "\n") && len(lines) == 1 {
			if got, want := cleanText(s), Truncate(strings.Join(strings.Fields(lines[0]), " "), maxText); got != want {
				t.Errorf("cleanText(%q) = %q, want %q", s, got, want)
			}
		}
	})
}
