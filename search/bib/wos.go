package bib

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Web of Science's tagged export ("Plain text file", savedrecs.txt): "FN"
// and "VR" lines, then records of two-letter tags, each from PT to ER, a
// value going on in lines indented by three spaces. Authors, editors,
// keywords and cited references take a line each.

// wosMulti are the tags whose continuation lines are more values, not more
// of one value.
var wosMulti = setOf("AU", "AF", "BA", "BF", "ED", "BE", "CA", "GP", "CR", "C1", "C3", "RI", "OI", "EM")

// ReadWoS reads a Web of Science tagged export.
func ReadWoS(data []byte) ([]Item, []error) {
	if len(data) > MaxInput {
		return nil, []error{tooLarge("Web of Science", len(data))}
	}
	var (
		items []Item
		lines []int
		errs  problems
		rec   map[string][]string
		tag   string
	)
	finish := func() {
		if rec != nil {
			it := wosItem(rec)
			it.Clean()
			items = append(items, it)
			rec = nil
		}
	}
	text := decodeInput(data)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "   ") && rec != nil && tag != "":
			v := strings.TrimSpace(line)
			vs := rec[tag]
			switch {
			case wosMulti[tag]:
				rec[tag] = append(vs, v)
			case len(vs) > 0 && len(vs[len(vs)-1])+len(v) < maxValue:
				vs[len(vs)-1] += " " + v
			}
		case len(line) >= 2 && isWoSTag(line[:2]) && (len(line) == 2 || line[2] == ' '):
			tag = line[:2]
			v := strings.TrimSpace(line[2:])
			switch {
			case tag == "PT":
				finish()
				if len(items) == MaxItems {
					errs.add(tooMany("Web of Science", n))
					return items, errs.result()
				}
				rec = map[string][]string{}
				lines = append(lines, n)
			case tag == "ER":
				finish()
				continue
			case tag == "FN" || tag == "VR" || tag == "EF":
				continue
			case rec == nil:
				errs.add(&ParseError{Format: "Web of Science", Line: n, Msg: fmt.Sprintf("%s is outside a record (no PT line starts it)", tag)})
				continue
			}
			if len(rec[tag]) < maxList {
				rec[tag] = append(rec[tag], v)
			}
		}
	}
	finish()
	items = settleIDs(items, lines, "Web of Science", "UT", &errs)
	return items, errs.result()
}

func isWoSTag(s string) bool {
	return isUpperASCII(s[0]) && (isUpperASCII(s[1]) || s[1] >= '0' && s[1] <= '9')
}

func wosItem(r map[string][]string) Item {
	first := func(tags ...string) string {
		for _, t := range tags {
			if vs := r[t]; len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
				return strings.TrimSpace(vs[0])
			}
		}
		return ""
	}
	it := Item{
		ID:        first("UT"),
		Title:     first("TI"),
		Venue:     titleCaseCaps(first("SO")),
		Volume:    first("VL"),
		Issue:     first("IS"),
		Publisher: titleCaseCaps(first("PU")),
		DOI:       CleanDOI(first("DI")),
		ISSN:      first("SN", "EI"),
		ISBN:      first("BN"),
		Abstract:  first("AB"),
		Language:  languageTag(first("LA")),
		Type:      wosType(first("PT"), first("DT")),
	}
	it.Authors = wosNames(r["AF"])
	if len(it.Authors) == 0 {
		it.Authors = wosNames(r["AU"])
	}
	for _, g := range r["CA"] { // group authors
		it.Authors = append(it.Authors, Name{Literal: g})
	}
	it.Editors = wosNames(r["BE"])
	if len(it.Editors) == 0 {
		it.Editors = wosNames(r["ED"])
	}
	if bp, ep := first("BP"), first("EP"); bp != "" {
		it.Pages = bp
		if ep != "" && ep != bp {
			it.Pages = bp + "–" + ep
		}
	} else {
		it.Pages = first("AR") // an article number stands for its pages
	}
	if y := YearIn(first("PY")); y > 0 {
		it.Year, it.Date = y, yearString(y)
		if m := monthNumber(strings.Fields(first("PD") + " x")[0]); m > 0 {
			it.Date += "-" + twoDigits(m)
		}
	}
	if it.DOI != "" {
		it.URL = "https://doi.org/" + it.DOI
	}
	it.Tags = splitList(first("DE"), ";")
	return it
}

// wosNames reads "Wodarz, Siggi" (AF) or "Wodarz, S" (AU).
func wosNames(vs []string) []Name {
	var out []Name
	for _, v := range vs {
		if n := risNames([]string{v}); len(n) > 0 && len(out) < maxNames {
			out = append(out, n[0])
		}
	}
	return out
}

func wosType(pt, dt string) string {
	dt = strings.ToLower(dt)
	switch {
	case strings.Contains(dt, "book chapter"):
		return "chapter"
	case strings.Contains(dt, "proceedings paper") || pt == "C":
		return "paper-conference"
	case pt == "B" || pt == "S" && strings.Contains(dt, "book"):
		return "book"
	case pt == "P":
		return "patent"
	case pt == "J" || pt == "S":
		return "article-journal"
	}
	return "document"
}

// titleCaseCaps writes a name given in capitals (WoS writes every journal
// so) in title case; a name in mixed case is kept as it is.
func titleCaseCaps(s string) string {
	if s == "" || strings.ToUpper(s) != s || strings.ToLower(s) == s {
		return s
	}
	words := strings.Fields(strings.ToLower(s))
	for i, w := range words {
		if i > 0 && minorWords[w] {
			continue
		}
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	return strings.Join(words, " ")
}

var minorWords = setOf("a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with",
	"de", "der", "des", "die", "du", "et", "la", "le", "les", "und", "y")
