package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/researchtui/researchtui/search"
)

// References in APA 7, built from a source's metadata: the person's
// library gives the most (type, editors, volume, issue, pages, publisher),
// the scholarly APIs what they have.

// APA formats a reference in APA 7 style from source metadata. A work
// from the person's library has its type, volume, issue, pages and
// publisher: a book is cited with its title in italics and its publisher,
// a chapter or conference paper "In E. Editor (Ed.), *Book* (pp. 1–10)",
// an article with
// "*Journal*, *12*(3), 1–10"; a work found online has what the sources
// give (venue and link).
func APA(r search.Record) string {
	title := MDText(strings.TrimSpace(r.Title))
	if title == "" {
		title = "Untitled"
	}
	// Every field is text from outside, escaped once here: Markdown reads
	// none of it as syntax.
	venue := MDText(r.Venue)
	p := r.Publication
	p.Publisher, p.Volume, p.Issue, p.Pages = MDText(p.Publisher), MDText(p.Volume), MDText(p.Issue), MDText(p.Pages)
	// titled is the title as its sentence; rest what follows it.
	var titled string
	var rest strings.Builder
	preprint := false
	switch p.ItemType {
	case "book", "thesis", "report", "dataset", "software":
		titled = "*" + SentenceEnd(title, "*")
		if p.Publisher != "" && p.Publisher != venue {
			rest.WriteString(" " + SentenceEnd(p.Publisher, ""))
		}
	case "chapter", "paper-conference", "entry-encyclopedia":
		titled = SentenceEnd(title, "")
		if venue != "" {
			rest.WriteString(" In ")
			if eds := MDText(apaEditors(p.Editors)); eds != "" {
				rest.WriteString(eds + ", ")
			}
			rest.WriteString("*" + venue + "*")
			if p.Pages != "" {
				rest.WriteString(" (pp. " + p.Pages + ")")
			}
			rest.WriteString(".")
		}
		if p.Publisher != "" {
			rest.WriteString(" " + SentenceEnd(p.Publisher, ""))
		}
	default:
		if r.ArxivID != "" && (venue == "" || search.ArxivVenue(r.Venue) == "arXiv") {
			// A preprint, as APA 7 cites one, its title in italics:
			// "*Title* (arXiv:2302.04761). arXiv."
			titled = fmt.Sprintf("*%s* (arXiv:%s).", strings.TrimSuffix(title, "."), MDText(r.ArxivID))
			rest.WriteString(" arXiv.")
			preprint = true
			break
		}
		titled = SentenceEnd(title, "")
		if venue != "" {
			rest.WriteString(" *" + venue + "*")
			if p.Volume != "" {
				rest.WriteString(", *" + p.Volume + "*")
			}
			if p.Issue != "" {
				rest.WriteString("(" + p.Issue + ")")
			}
			if p.Pages != "" {
				rest.WriteString(", " + p.Pages)
			}
			rest.WriteString(".")
		}
	}
	var b strings.Builder
	year := "(" + MDText(YearOrND(r.Year)) + ")."
	if a := apaAuthors(r.Authors, r.AuthorsFiled); a != "" {
		if len(p.Editors) > 0 && slices.Equal(p.Editors, r.AuthorsFiled) { // an edited book, cited by its editors
			a += map[bool]string{true: " (Ed.)", false: " (Eds.)"}[len(p.Editors) == 1]
		}
		if !strings.HasSuffix(a, ".") {
			a += "." // "World Health Organization. (2020)." as APA ends the author element
		}
		b.WriteString(MDText(a) + " " + year + " " + titled)
	} else {
		// APA 7 puts a work without authors under its title:
		// "Communicating ecology. (2022). *Venue*."
		b.WriteString(titled + " " + year)
	}
	b.WriteString(rest.String())
	switch {
	case r.DOI != "" && (!preprint || isArxivDOI(r.DOI)):
		b.WriteString(" https://doi.org/" + MDDOI(r.DOI))
	case r.ArxivID != "":
		// A preprint links the version that was read: a publisher's DOI on
		// an arXiv record is another work's, which APA would cite with
		// its own venue.
		fmt.Fprintf(&b, " https://arxiv.org/abs/%s", MDPathEscape(r.ArxivID))
	case MDURL(r.URL) != "":
		b.WriteString(" " + MDURL(r.URL))
	}
	return b.String()
}

// isArxivDOI says whether doi is one arXiv assigned (10.48550/arXiv.ID).
func isArxivDOI(doi string) bool {
	return strings.HasPrefix(strings.ToLower(doi), "10.48550/")
}

// MDDOI is a DOI as a doi.org link prints it: the characters DOIs hold
// ("_", "(", ")", ";", ":") stay as they are, since in running text
// Markdown reads none of them as syntax (an underscore between letters
// or digits is no emphasis, and no "]" comes before a parenthesis); what
// could be syntax or end the address is percent-encoded.
func MDDOI(doi string) string {
	var b strings.Builder
	for i, r := range doi {
		var prev, next rune
		if i > 0 {
			prev = rune(doi[i-1])
		}
		if i+1 < len(doi) {
			next = rune(doi[i+1])
		}
		switch {
		case r == '_' && isAlnum(prev) && isAlnum(next), r == '(' || r == ')' || r == ';' || r == ':':
			b.WriteRune(r)
		default:
			b.WriteString(MDPathEscape(string(r)))
		}
	}
	return b.String()
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// SentenceEnd ends s with a full stop unless it ends with one, a question
// or an exclamation mark; closing (an italics marker) goes before the
// added stop, as APA sets "*Title*." but "*Why?*".
func SentenceEnd(s, closing string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s + closing
	}
	return s + closing + "."
}

// apaAuthors writes "Family, G. I., Family, G., & Family, G."; more than 20
// authors are cut to the first 19, an ellipsis and the last. filed, when a
// library gave it for every author, says which words are the family name
// ("Family, Given"; an organisation without a comma, kept whole).
func apaAuthors(names, filed []string) string {
	var fs []string
	if len(filed) == len(names) && len(filed) > 0 {
		for _, n := range filed {
			f := strings.TrimSpace(n)
			if strings.Contains(f, ",") {
				f = apaName(f)
			}
			if f != "" {
				fs = append(fs, f)
			}
		}
	} else {
		for _, n := range names {
			if f := apaName(n); f != "" {
				fs = append(fs, f)
			}
		}
	}
	switch {
	case len(fs) == 0:
		return ""
	case len(fs) == 1:
		return fs[0]
	case len(fs) > 20:
		return strings.Join(fs[:19], ", ") + ", . . . " + fs[len(fs)-1]
	}
	return strings.Join(fs[:len(fs)-1], ", ") + ", & " + fs[len(fs)-1]
}

// particles belong to the family name: "Ludwig van Beethoven" is
// "van Beethoven, L.".
var particles = map[string]bool{"van": true, "von": true, "der": true, "den": true, "de": true, "del": true, "della": true,
	"di": true, "da": true, "du": true, "le": true, "la": true, "dos": true, "das": true, "ten": true, "ter": true, "bin": true, "al": true}

// apaName turns "Adrian Del Maestro" or "Del Maestro, Adrian" into
// "Del Maestro, A." (particles of the family name kept when written with a
// comma; otherwise the last word is the family name).
func apaName(n string) string {
	family, initials := NameParts(n)
	if initials == "" {
		return family
	}
	return family + ", " + initials
}

// apaEditors writes the editors of a chapter's book as APA's "In" wants
// them, initials first: "E. Editor (Ed.)", "E. Editor & F. Editor (Eds.)",
// "E. Editor, F. Editor, & G. Editor (Eds.)". filed names are "Family,
// Given"; one without a comma is an organisation, kept whole.
func apaEditors(filed []string) string {
	var ns []string
	for _, n := range filed {
		n = strings.TrimSpace(n)
		if !strings.Contains(n, ",") {
			if n != "" {
				ns = append(ns, n)
			}
			continue
		}
		family, initials := NameParts(n)
		switch {
		case family == "":
		case initials == "":
			ns = append(ns, family)
		default:
			initials, suffix, _ := strings.Cut(initials, ", ")
			ns = append(ns, strings.TrimSpace(initials+" "+family+" "+suffix)) // "J. Doe Jr."
		}
	}
	switch len(ns) {
	case 0:
		return ""
	case 1:
		return ns[0] + " (Ed.)"
	case 2:
		return ns[0] + " & " + ns[1] + " (Eds.)"
	}
	return strings.Join(ns[:len(ns)-1], ", ") + ", & " + ns[len(ns)-1] + " (Eds.)"
}

// NameParts is a name's family name and its initials ("J.-L. R."):
// "Family, Given" as written, otherwise the last word (with the particles
// before it) is the family name.
func NameParts(n string) (family, initials string) {
	n = strings.Join(strings.Fields(n), " ")
	if n == "" {
		return "", ""
	}
	var given, suffix string
	if f, g, ok := strings.Cut(n, ","); ok {
		family, given = strings.TrimSpace(f), strings.TrimSpace(g)
		if g, sfx, ok := strings.Cut(given, ","); ok { // "Doe, Jeffrey, Jr.", as a library files it
			given, suffix = strings.TrimSpace(g), strings.TrimSpace(sfx)
		}
	} else {
		parts := strings.Fields(n)
		i := len(parts) - 1
		for i > 1 && particles[strings.ToLower(parts[i-1])] {
			i--
		}
		family = strings.Join(parts[i:], " ")
		given = strings.Join(parts[:i], " ")
	}
	var out []string
	for _, g := range strings.Fields(given) {
		var parts []string
		for _, h := range strings.Split(g, "-") {
			r := []rune(strings.Trim(h, "."))
			if len(r) > 0 {
				parts = append(parts, string(r[0])+".")
			}
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "-"))
		}
	}
	initials = strings.Join(out, " ")
	if suffix != "" && initials != "" {
		initials += ", " + suffix // APA: "Doe, J., Jr."
	}
	return family, initials
}

// YearOrND is a year as a reference prints it: "n.d." when unknown.
func YearOrND(y int) string {
	switch {
	case y == 0:
		return "n.d."
	case y < 0:
		return fmt.Sprint(-y) + " B.C.E."
	}
	return fmt.Sprint(y)
}
