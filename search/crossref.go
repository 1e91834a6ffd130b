package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// DefaultCrossrefURL is the Crossref REST API base.
const DefaultCrossrefURL = "https://api.crossref.org"

// crossrefSelect names the fields a search asks for; update-to, updated-by
// and relation carry retractions and corrections.
const crossrefSelect = "DOI,title,author,issued,published,container-title,abstract,URL,link,is-referenced-by-count,type,update-to,updated-by,relation"

type crossrefSource struct {
	endpoint
	mailto string
}

// NewCrossref returns the Crossref source (/works?query=). baseURL ""
// means DefaultCrossrefURL; mailto (RESEARCHTUI_CONTACT_EMAIL) joins
// Crossref's polite pool. JATS abstracts become plain text.
func NewCrossref(c *Client, baseURL, mailto string) Source {
	return &crossrefSource{endpoint: newEndpoint(c, baseURL, DefaultCrossrefURL), mailto: mailto}
}

func (s *crossrefSource) Name() string { return "crossref" }

func (s *crossrefSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	query, limit, ok := searchTerms(query, limit, 10)
	if !ok {
		return nil, nil
	}
	v := url.Values{}
	v.Set("query", query)
	v.Set("rows", strconv.Itoa(min(limit, 100)))
	v.Set("select", crossrefSelect)
	if s.mailto != "" {
		v.Set("mailto", s.mailto)
	}
	hdr := http.Header{"Accept": {"application/json"}}
	if s.mailto != "" {
		// the polite pool also reads the contact from the User-Agent
		hdr.Set("User-Agent", s.c.UserAgent()+" (mailto:"+s.mailto+")")
	}
	resp, err := s.c.Get(ctx, withQuery(s.base+"/works", v), hdr)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && resp != nil {
			if msg := crossrefErrorMessage(resp.Body); msg != "" {
				return nil, fmt.Errorf("crossref: HTTP %d: %s", he.Status, msg)
			}
		}
		return nil, fmt.Errorf("crossref: %w", err)
	}
	return parseUpTo(ParseCrossref, resp.Body, limit)
}

// crossrefErrorMessage reads Crossref's error bodies: JSON
// {"status":"failed","message":[{"message":...}]} or plain text.
func crossrefErrorMessage(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var e struct {
			Type    string `json:"message-type"`
			Message []struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"message"`
		}
		if json.Unmarshal(trimmed, &e) == nil && len(e.Message) > 0 {
			var parts []string
			for _, m := range e.Message {
				parts = append(parts, textkit.CleanLine(textkit.FirstNonEmpty(m.Message, m.Type)))
			}
			return textkit.CleanLine(e.Type + ": " + strings.Join(parts, "; "))
		}
		return ""
	}
	return errorSnippet(trimmed)
}

type crWork struct {
	DOI    string   `json:"DOI"`
	Title  []string `json:"title"`
	URL    string   `json:"URL"`
	Author []struct {
		Given  string `json:"given"`
		Family string `json:"family"`
		Name   string `json:"name"`
	} `json:"author"`
	Issued         crDate    `json:"issued"`
	Published      crDate    `json:"published"`
	ContainerTitle []string  `json:"container-title"`
	Type           laxString `json:"type"`
	Volume         laxString `json:"volume"`
	Issue          laxString `json:"issue"`
	Page           laxString `json:"page"`
	Publisher      laxString `json:"publisher"`
	Editor         []struct {
		Given  laxString `json:"given"`
		Family laxString `json:"family"`
		Name   laxString `json:"name"`
	} `json:"editor"`
	Abstract string `json:"abstract"`
	Cited    int    `json:"is-referenced-by-count"`
	Link     []struct {
		URL         string `json:"URL"`
		ContentType string `json:"content-type"`
	} `json:"link"`
	UpdateTo  []crUpdate `json:"update-to"`  // on a notice: the works it updates
	UpdatedBy []crUpdate `json:"updated-by"` // on a work: the notices that update it
	// Relation maps relation types to linked IDs; only the retraction
	// ones are read.
	Relation map[string]json.RawMessage `json:"relation"`
}

type crUpdate struct {
	DOI     string `json:"DOI"`
	Type    string `json:"type"`
	Source  string `json:"source"`
	Updated crDate `json:"updated"`
}

type crRelated struct {
	ID     string `json:"id"`
	IDType string `json:"id-type"`
}

type crDate struct {
	Parts [][]*int `json:"date-parts"`
}

// date renders the date parts as "2015-05-04", "2015-05" or "2015".
func (d crDate) date() string {
	if len(d.Parts) == 0 {
		return ""
	}
	var parts []string
	for i, p := range d.Parts[0] {
		if p == nil || i > 2 || *p < 0 || *p > 9999 {
			break
		}
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%04d", *p))
		} else {
			parts = append(parts, fmt.Sprintf("%02d", *p))
		}
	}
	return strings.Join(parts, "-")
}

func (d crDate) year() int {
	if len(d.Parts) > 0 && len(d.Parts[0]) > 0 && d.Parts[0][0] != nil {
		return *d.Parts[0][0]
	}
	return 0
}

// ParseCrossref parses a Crossref work-list or single work answer.
func ParseCrossref(body []byte) ([]Record, error) {
	var env struct {
		Status  string          `json:"status"`
		Type    string          `json:"message-type"`
		Message json.RawMessage `json:"message"`
	}
	if err := decodeObject("crossref", body, &env); err != nil {
		return nil, err
	}
	var works []crWork
	switch env.Type {
	case "work-list":
		var list struct {
			Items []crWork `json:"items"`
		}
		if err := json.Unmarshal(env.Message, &list); err != nil {
			return nil, fmt.Errorf("crossref: malformed work list: %w", err)
		}
		works = list.Items
	case "work":
		var w crWork
		if err := json.Unmarshal(env.Message, &w); err != nil {
			return nil, fmt.Errorf("crossref: malformed work: %w", err)
		}
		works = []crWork{w}
	default:
		if msg := crossrefErrorMessage(body); msg != "" {
			return nil, fmt.Errorf("crossref: %s", msg)
		}
		return nil, fmt.Errorf("crossref: unexpected answer %q", errorSnippet(body))
	}
	recs := make([]Record, 0, len(works))
	for _, w := range works {
		r := Record{
			Source:      "crossref",
			FoundBy:     []string{"crossref"},
			DOI:         NormalizeDOI(w.DOI),
			URL:         textkit.CleanLine(w.URL),
			Abstract:    CleanAbstract(InlineText(w.Abstract)),
			Citations:   w.Cited,
			Year:        w.Issued.year(),
			Publication: publicationOf(crossrefTypes[string(w.Type)], string(w.Volume), string(w.Issue), string(w.Page), string(w.Publisher)),
		}
		if len(w.Title) > 0 {
			r.Title = InlineText(w.Title[0])
		}
		if len(w.ContainerTitle) > 0 {
			r.Venue = MetaText(w.ContainerTitle[0])
		}
		if r.Year == 0 {
			r.Year = w.Published.year()
		}
		for _, a := range w.Author {
			n := MetaText(strings.TrimSpace(a.Given + " " + a.Family))
			if n == "" {
				n = MetaText(a.Name)
			}
			if n != "" {
				r.Authors = append(r.Authors, n)
				r.AuthorsFiled = append(r.AuthorsFiled, FiledName(a.Family, a.Given, a.Name))
			}
		}
		for _, l := range w.Link {
			if strings.Contains(strings.ToLower(l.ContentType), "pdf") {
				r.PDFURL = textkit.CleanLine(l.URL)
				break
			}
		}
		if r.ArxivID == "" && strings.HasPrefix(r.DOI, "10.48550/arxiv.") {
			r.ArxivID = ArxivIDFromURL(r.DOI)
		}
		if r.URL == "" && r.DOI != "" {
			r.URL = "https://doi.org/" + r.DOI
		}
		if inBook[r.ItemType] { // a journal article's "editor" is its academic editor, not part of a reference
			for _, e := range w.Editor {
				if f := FiledName(string(e.Family), string(e.Given), string(e.Name)); f != "" {
					r.Editors = append(r.Editors, f)
				}
			}
		}
		crossrefUpdates(&r, w)
		if r.Title == "" && r.DOI == "" {
			continue
		}
		AssignKey(&r)
		recs = append(recs, r)
	}
	return recs, nil
}

// crossrefUpdates reads a work's editorial notices. updated-by (on the
// work: Crossref now lists Retraction Watch's records there as well as the
// publisher's) says the work was corrected or retracted; update-to (on the
// notice) says this record is the notice, which is treated as retracted too
// when it retracts another work, as OpenAlex does; relation is-retracted-by
// is the older way to say the first.
func crossrefUpdates(r *Record, w crWork) {
	add := func(u crUpdate, notice bool) {
		t := normalizeUpdateType(u.Type)
		if t == "" {
			return
		}
		up := Update{Type: t, DOI: NormalizeDOI(textkit.CleanLine(u.DOI)), Date: u.Updated.date(),
			Source: textkit.CleanLine(u.Source), Notice: notice}
		if up.IsRetraction() {
			r.Retracted = true
		}
		r.Updates = mergeUpdates(r.Updates, []Update{up})
	}
	for _, u := range w.UpdatedBy {
		add(u, false)
	}
	for _, u := range w.UpdateTo {
		add(u, true)
	}
	for name, raw := range w.Relation {
		if !strings.Contains(strings.ToLower(name), "retracted-by") {
			continue
		}
		var rel []crRelated
		_ = json.Unmarshal(raw, &rel) // a malformed relation is ignored, not fatal
		for _, x := range rel {
			doi := ""
			if strings.EqualFold(x.IDType, "doi") {
				doi = x.ID
			}
			add(crUpdate{DOI: doi, Type: "retraction", Source: "relation"}, false)
		}
	}
}
