package search

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// DefaultArxivURL is the arXiv API query endpoint.
const DefaultArxivURL = "https://export.arxiv.org/api/query"

type arxivSource struct {
	c    *Client
	base string
}

// NewArxiv returns the arXiv source (Atom API). baseURL "" means
// DefaultArxivURL; the caller reads RESEARCHTUI_ARXIV_URL.
func NewArxiv(c *Client, baseURL string) Source {
	if baseURL == "" {
		baseURL = DefaultArxivURL
	}
	return &arxivSource{c: c, base: baseURL}
}

func (a *arxivSource) Name() string { return "arxiv" }

func (a *arxivSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	q := ArxivQuery(query)
	if q == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 10
	}
	v := url.Values{}
	v.Set("search_query", q)
	v.Set("start", "0")
	v.Set("max_results", strconv.Itoa(limit))
	v.Set("sortBy", "relevance")
	v.Set("sortOrder", "descending")
	resp, err := a.c.Get(ctx, withQuery(a.base, v), nil)
	if err != nil {
		// arXiv reports bad queries as a 400 with an Atom error feed.
		var he *HTTPError
		if errors.As(err, &he) && resp != nil {
			if _, perr := ParseArxivFeed(resp.Body); perr != nil && strings.HasPrefix(perr.Error(), "arxiv: ") {
				return nil, perr
			}
		}
		return nil, fmt.Errorf("arxiv: %w", err)
	}
	return parseUpTo(ParseArxivFeed, resp.Body, limit)
}

var arxivFieldRe = regexp.MustCompile(`\b(all|ti|au|abs|co|jr|cat|rn|id):`)

// ArxivQuery turns free text into an arXiv search_query: quoted phrases stay
// phrases, the other words are ANDed, each as all:<term>. Text that already
// uses arXiv field syntax (ti:, au:, all:, ...) is passed through.
func ArxivQuery(q string) string {
	q = strings.TrimSpace(textkit.CleanLine(q))
	if q == "" || arxivFieldRe.MatchString(q) {
		return q
	}
	var terms []string
	for i, part := range strings.Split(q, `"`) {
		if i%2 == 1 { // inside quotes
			words := arxivWords(part)
			if len(words) > 0 {
				terms = append(terms, `all:"`+strings.Join(words, " ")+`"`)
			}
			continue
		}
		for _, w := range arxivWords(part) {
			if !stopWords[strings.ToLower(w)] {
				terms = append(terms, "all:"+w)
			}
		}
	}
	return strings.Join(terms, " AND ")
}

func arxivWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '.' || r == '_' || isAlnum(r))
	})
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 0x7f && (r >= 0xc0)
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "for": true, "to": true,
	"and": true, "or": true, "not": true, "with": true, "by": true, "is": true, "are": true, "what": true,
	"how": true, "why": true, "does": true, "do": true, "which": true, "from": true, "at": true, "as": true,
	"be": true, "can": true, "its": true, "their": true, "this": true, "that": true,
}

func withQuery(base string, v url.Values) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + v.Encode()
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Entries []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomEntry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	Links []struct {
		Href  string `xml:"href,attr"`
		Rel   string `xml:"rel,attr"`
		Type  string `xml:"type,attr"`
		Title string `xml:"title,attr"`
	} `xml:"http://www.w3.org/2005/Atom link"`
	DOI        string `xml:"http://arxiv.org/schemas/atom doi"`
	JournalRef string `xml:"http://arxiv.org/schemas/atom journal_ref"`
}

// ParseArxivFeed parses an arXiv API Atom feed (current and 2016 layouts).
// An error feed (one entry titled "Error") becomes an error carrying its
// summary; an empty feed gives no records and no error.
func ParseArxivFeed(body []byte) ([]Record, error) {
	var f atomFeed
	if err := xml.Unmarshal(body, &f); err != nil {
		return nil, fmt.Errorf("arxiv: malformed Atom feed: %w (%s)", err, errorSnippet(body))
	}
	recs := make([]Record, 0, len(f.Entries))
	for _, e := range f.Entries {
		if textkit.CleanLine(e.Title) == "Error" && strings.Contains(e.ID, "/api/errors") {
			msg := textkit.CleanLine(e.Summary)
			if msg == "" {
				msg = e.ID
			}
			return nil, fmt.Errorf("arxiv: %s", msg)
		}
		r := Record{
			Source:   "arxiv",
			FoundBy:  []string{"arxiv"},
			ArxivID:  ArxivIDFromURL(e.ID),
			DOI:      NormalizeDOI(e.DOI),
			Title:    textkit.CleanLine(e.Title),
			Abstract: CleanAbstract(textkit.CleanLine(e.Summary)),
		}
		if ref := MetaText(e.JournalRef); ref != "" {
			if j, ok := parseJournalRef(ref); ok {
				r.Venue, r.Publication = j.name, publicationOf("", j.volume, j.issue, j.pages, "")
				if j.year > 0 {
					r.Year = j.year // the published version's, which the reference cites
				}
			} else {
				r.JournalRef = ref
			}
		}
		if r.Venue == "" {
			r.Venue = "arXiv"
		}
		if len(e.Published) >= 4 && r.Year == 0 {
			r.Year, _ = strconv.Atoi(e.Published[:4])
		}
		for _, au := range e.Authors {
			if n := textkit.CleanLine(au.Name); n != "" {
				r.Authors = append(r.Authors, n)
			}
		}
		for _, l := range e.Links {
			href := httpsArxiv(textkit.CleanLine(l.Href))
			switch {
			case l.Title == "pdf" || l.Type == "application/pdf":
				if r.PDFURL == "" {
					r.PDFURL = href
				}
			case l.Rel == "alternate" || l.Rel == "":
				if r.URL == "" {
					r.URL = href
				}
			}
		}
		if r.URL == "" {
			r.URL = httpsArxiv(textkit.CleanLine(e.ID))
		}
		if r.ArxivID == "" && r.Title == "" {
			continue
		}
		AssignKey(&r)
		recs = append(recs, r)
	}
	return recs, nil
}

var (
	arxivAbsRe  = regexp.MustCompile(`arxiv\.org/(?:abs|pdf)/([a-z\-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d+)?`)
	arxivBareRe = regexp.MustCompile(`^(?i:arxiv:)?([a-z\-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d+)?$`)
)

// ArxivIDFromURL extracts a version-less arXiv ID from an abs/pdf URL, an
// "arXiv:" identifier, a bare ID or an arXiv DataCite DOI (10.48550/arxiv.X).
func ArxivIDFromURL(s string) string {
	s = strings.TrimSpace(s)
	if m := arxivAbsRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	ls := strings.ToLower(s)
	if i := strings.Index(ls, "10.48550/arxiv."); i >= 0 {
		s = s[i+len("10.48550/arxiv."):]
	}
	if m := arxivBareRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func httpsArxiv(u string) string {
	if strings.HasPrefix(u, "http://arxiv.org/") || strings.HasPrefix(u, "http://export.arxiv.org/") {
		return "https://" + strings.TrimPrefix(u, "http://")
	}
	return u
}

// NormalizeDOI lower-cases a DOI and strips URL and "doi:" prefixes.
func NormalizeDOI(s string) string {
	s = strings.TrimSpace(textkit.CleanLine(s))
	ls := strings.ToLower(s)
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"} {
		if strings.HasPrefix(ls, p) {
			ls = ls[len(p):]
			break
		}
	}
	if !strings.HasPrefix(ls, "10.") && !(strings.HasPrefix(ls, "10/") && len(ls) > 3) {
		return "" // a DOI, or a short DOI ("10/fqd6hj", which doi.org resolves)
	}
	return ls
}

// journalRef is arXiv's journal reference read as a journal's: its name,
// volume, issue and pages.
type journalRef struct {
	name, volume, issue, pages string
	year                       int // the published version's, when given
}

var (
	// notAJournal are the words of a reference to a conference, a
	// workshop or a book: a journal's name never holds them.
	notAJournal = regexp.MustCompile(`(?i:\b(proc|proceedings|conference|symposium|workshop|chapter|book|lecture notes|in:)\b|\bpp\.)|^In ?[A-Z]`)
	// journalRefRe is "Name 85, 115117 (2012)", "Name, 26, 1244002",
	// "Name.56:1-50,2006" or "Name (ABBR), Vol.3, No.1, January 2012".
	journalRefRe = regexp.MustCompile(`^([^\d]*[A-Za-z.)])[\s,]*(?:Vol\.?\s*)?(\d+)(?:\s*,?\s*No\.?\s*(\d+))?(?:\s*[,:]\s*([0-9][0-9A-Za-z()]*(?:[-–][0-9A-Za-z]+)?))?`)
	// volLabel ends a name read up to its volume: "Journal (ABBR), Vol."
	// refYear is a reference's year: "(2012)" or a last ",2006".
	refYear  = regexp.MustCompile(`\((\d{4})\)|,\s*(\d{4})\.?$`)
	volLabel = regexp.MustCompile(`(?i)[\s,]*vol\.?$`)
)

// parseJournalRef reads ref as a journal reference; ok is false for what
// is not one (a conference's proceedings, a free-form note).
func parseJournalRef(ref string) (journalRef, bool) {
	if notAJournal.MatchString(ref) {
		return journalRef{}, false
	}
	m := journalRefRe.FindStringSubmatch(ref)
	if m == nil {
		return journalRef{}, false
	}
	name := strings.TrimRight(strings.TrimSpace(volLabel.ReplaceAllString(m[1], "")), ",")
	if len([]rune(name)) < 2 {
		return journalRef{}, false
	}
	pages := m[4]
	if len(pages) == 4 && pages >= "1800" && pages <= "2100" && !strings.ContainsAny(pages, "-–") && m[3] == "" && strings.Contains(ref, "("+pages+")") {
		pages = "" // the year, not a page
	}
	j := journalRef{name: name, volume: m[2], issue: m[3], pages: pages}
	if y := refYear.FindStringSubmatch(ref); y != nil {
		j.year, _ = strconv.Atoi(y[1] + y[2])
	}
	return j, true
}
