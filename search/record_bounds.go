package search

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Caps on a record's metadata. A source that answers a 1.3 MB title
// (hostile, or broken) must not slow every later step, grow the database
// and the report by megabytes, or push the question out of a prompt. The
// caps are well above real metadata: the longest titles run to ~300
// characters, structured abstracts to ~6,000, and physics collaborations
// list thousands of authors (APA shows the first 19 and the last).
const (
	maxTitleRunes      = 600
	maxAbstractRunes   = 20000
	maxVenueRunes      = 300
	maxNameRunes       = 200
	maxShortFieldRunes = 100 // volume, issue, pages
	maxAuthors         = 100 // the first 99 and the last
)

// BoundFields cuts r's fields to the caps above and notes, in r.Cut, each
// field that was cut ("title cut to 600 characters"). Every
// source calls it (through AssignKey) when it makes a record; a run calls
// it again on every record it registers, wherever it came from.
func BoundFields(r *Record) {
	cut := func(field string, s *string, limit int) {
		if utf8.RuneCountInString(*s) > limit {
			*s = clipRunes(*s, limit)
			r.Cut = appendOnce(r.Cut, fmt.Sprintf("%s cut to %s characters", field, thousands(limit)))
		}
	}
	cut("title", &r.Title, maxTitleRunes)
	cut("abstract", &r.Abstract, maxAbstractRunes)
	cut("venue", &r.Venue, maxVenueRunes)
	cut("journal reference", &r.JournalRef, maxVenueRunes)
	cut("volume", &r.Volume, maxShortFieldRunes)
	cut("issue", &r.Issue, maxShortFieldRunes)
	cut("pages", &r.Pages, maxShortFieldRunes)
	cut("publisher", &r.Publisher, maxVenueRunes)
	names := func(field string, list []string) []string {
		long := false
		for i := range list {
			if utf8.RuneCountInString(list[i]) > maxNameRunes {
				list[i] = clipRunes(list[i], maxNameRunes)
				long = true
			}
		}
		if long {
			r.Cut = appendOnce(r.Cut, fmt.Sprintf("%s: names cut to %d characters", field, maxNameRunes))
		}
		if n := len(list); n > maxAuthors {
			list = append(list[:maxAuthors-1:maxAuthors-1], list[n-1])
			r.Cut = appendOnce(r.Cut, fmt.Sprintf("%s: %s names, kept the first %d and the last", field, thousands(n), maxAuthors-1))
		}
		return list
	}
	r.Authors = names("authors", r.Authors)
	r.AuthorsFiled = names("authors", r.AuthorsFiled)
	r.Editors = names("editors", r.Editors)
}

// clipRunes keeps the first limit-1 runes of s and an ellipsis.
func clipRunes(s string, limit int) string {
	i, n := 0, 0
	for i < len(s) && n < limit-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return s[:i] + "…"
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// thousands writes n with commas: 1,300,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ArxivVenue is "arXiv" for the names APIs give the arXiv repository as a
// venue ("arXiv.org", "ArXiv", "arXiv (Cornell University)", "arXiv
// preprint"), and v otherwise: a preprint's venue is the repository,
// never a journal called "arXiv.org".
func ArxivVenue(v string) string {
	l := strings.ToLower(strings.TrimSpace(v))
	switch {
	case l == "arxiv", l == "arxiv.org", strings.HasPrefix(l, "arxiv (cornell"), strings.HasPrefix(l, "arxiv preprint"):
		return "arXiv"
	}
	return v
}
