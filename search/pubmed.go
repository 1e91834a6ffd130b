package search

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/researchtui/researchtui/textkit"
)

// DefaultPubMedURL is the NCBI E-utilities base.
const DefaultPubMedURL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"

type pubMedSource struct {
	endpoint
	key   string
	email string
}

// PubMedRate is the request spacing NCBI allows: 3 requests a second
// without an API key, 10 with one.
func PubMedRate(keyed bool) time.Duration {
	if keyed {
		return 100 * time.Millisecond
	}
	return 340 * time.Millisecond
}

// NewPubMed returns the PubMed source (esearch, then efetch XML). baseURL ""
// means DefaultPubMedURL; apiKey (NCBI_API_KEY) raises NCBI's rate limit
// from 3 to 10 requests a second, and the client's limit for the host is
// raised to match (without a key, DefaultHostLimits keeps NCBI's 3/s); email (optional) is sent as NCBI asks of tools.
func NewPubMed(c *Client, baseURL, apiKey, email string) Source {
	e := newEndpoint(c, baseURL, DefaultPubMedURL)
	if u, err := url.Parse(e.base); err == nil && u.Host != "" && apiKey != "" {
		c.SetHostLimit(u.Host, PubMedRate(true))
	}
	return &pubMedSource{endpoint: e, key: apiKey, email: email}
}

func (p *pubMedSource) Name() string { return "pubmed" }

func (p *pubMedSource) params(v url.Values) url.Values {
	v.Set("tool", "researchtui")
	if p.key != "" {
		v.Set("api_key", p.key)
	}
	if p.email != "" {
		v.Set("email", p.email)
	}
	return v
}

func (p *pubMedSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	query, limit, ok := searchTerms(query, limit, 10)
	if !ok {
		return nil, nil
	}
	v := p.params(url.Values{})
	v.Set("db", "pubmed")
	v.Set("term", query)
	v.Set("retmax", strconv.Itoa(limit))
	v.Set("retmode", "json")
	v.Set("sort", "relevance")
	resp, err := p.c.Get(ctx, withQuery(p.base+"/esearch.fcgi", v), nil)
	if err != nil {
		return nil, fmt.Errorf("pubmed: esearch: %w", err)
	}
	ids, err := ParsePubMedSearch(resp.Body)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	v = p.params(url.Values{})
	v.Set("db", "pubmed")
	v.Set("id", strings.Join(ids, ","))
	v.Set("retmode", "xml")
	v.Set("rettype", "abstract")
	resp, err = p.c.Get(ctx, withQuery(p.base+"/efetch.fcgi", v), nil)
	if err != nil {
		return nil, fmt.Errorf("pubmed: efetch: %w", err)
	}
	recs, err := ParsePubMedArticles(resp.Body)
	if err != nil {
		return nil, err
	}
	// efetch may reorder; keep esearch's relevance order
	pos := map[string]int{}
	for i, id := range ids {
		pos[id] = i
	}
	ordered := make([]Record, len(ids))
	var extra []Record
	for _, r := range recs {
		if i, ok := pos[r.PMID]; ok && ordered[i].PMID == "" {
			ordered[i] = r
		} else {
			extra = append(extra, r)
		}
	}
	out := make([]Record, 0, len(recs))
	for _, r := range ordered {
		if r.PMID != "" {
			out = append(out, r)
		}
	}
	return append(out, extra...), nil
}

var pmidRe = regexp.MustCompile(`^\d{1,9}$`)

// ParsePubMedSearch reads the PMIDs of an esearch answer, JSON or XML. No
// results (including NCBI's PhraseNotFound error list) is not an error; an
// ERROR field is.
func ParsePubMedSearch(body []byte) ([]string, error) {
	trimmed := bytes.TrimSpace(body)
	var ids []string
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		var env struct {
			Error  string `json:"error"`
			Result *struct {
				IDs   []string `json:"idlist"`
				Error string   `json:"ERROR"`
			} `json:"esearchresult"`
		}
		if err := json.Unmarshal(trimmed, &env); err != nil {
			return nil, fmt.Errorf("pubmed: malformed esearch JSON: %w", err)
		}
		if env.Error != "" {
			return nil, fmt.Errorf("pubmed: %s", textkit.CleanLine(env.Error))
		}
		if env.Result == nil {
			return nil, fmt.Errorf("pubmed: esearch answer without a result: %q", errorSnippet(body))
		}
		if env.Result.Error != "" && len(env.Result.IDs) == 0 {
			return nil, fmt.Errorf("pubmed: %s", textkit.CleanLine(env.Result.Error))
		}
		ids = env.Result.IDs
	case len(trimmed) > 0 && trimmed[0] == '<':
		var res struct {
			XMLName xml.Name `xml:"eSearchResult"`
			IDs     []string `xml:"IdList>Id"`
			Error   string   `xml:"ERROR"`
		}
		if err := xml.Unmarshal(trimmed, &res); err != nil {
			return nil, fmt.Errorf("pubmed: malformed esearch XML: %w", err)
		}
		if res.Error != "" && len(res.IDs) == 0 {
			return nil, fmt.Errorf("pubmed: %s", textkit.CleanLine(res.Error))
		}
		ids = res.IDs
	default:
		return nil, fmt.Errorf("pubmed: unexpected esearch answer: %q", errorSnippet(body))
	}
	out := ids[:0:0]
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if pmidRe.MatchString(id) {
			out = append(out, id)
		}
	}
	return out, nil
}

type pmArticle struct {
	PMID    string `xml:"MedlineCitation>PMID"`
	Article struct {
		Title   pmInner `xml:"ArticleTitle"`
		Journal struct {
			Title   string `xml:"Title"`
			Volume  string `xml:"JournalIssue>Volume"`
			Issue   string `xml:"JournalIssue>Issue"`
			PubDate struct {
				Year        string `xml:"Year"`
				MedlineDate string `xml:"MedlineDate"`
			} `xml:"JournalIssue>PubDate"`
		} `xml:"Journal"`
		Pagination struct {
			Start   string `xml:"StartPage"`
			End     string `xml:"EndPage"`
			Medline string `xml:"MedlinePgn"`
		} `xml:"Pagination"`
		Abstract []struct {
			Label string `xml:"Label,attr"`
			Inner string `xml:",innerxml"`
		} `xml:"Abstract>AbstractText"`
		Authors []struct {
			Last       string `xml:"LastName"`
			Fore       string `xml:"ForeName"`
			Collective string `xml:"CollectiveName"`
		} `xml:"AuthorList>Author"`
		ELocations []struct {
			Type  string `xml:"EIdType,attr"`
			Value string `xml:",chardata"`
		} `xml:"ELocationID"`
		ArticleDate []struct {
			Year string `xml:"Year"`
		} `xml:"ArticleDate"`
	} `xml:"MedlineCitation>Article"`
	IDs []struct {
		Type  string `xml:"IdType,attr"`
		Value string `xml:",chardata"`
	} `xml:"PubmedData>ArticleIdList>ArticleId"`
}

type pmInner struct {
	Inner string `xml:",innerxml"`
}

// ParsePubMedArticles parses an efetch PubmedArticleSet. Titles and
// abstracts with inline HTML and MathML become clean text; structured
// abstracts keep their section labels ("BACKGROUND: ...").
func ParsePubMedArticles(body []byte) ([]Record, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	var set struct {
		XMLName  xml.Name    `xml:"PubmedArticleSet"`
		Articles []pmArticle `xml:"PubmedArticle"`
	}
	if err := d.Decode(&set); err != nil {
		return nil, fmt.Errorf("pubmed: malformed efetch XML: %w (%s)", err, errorSnippet(body))
	}
	recs := make([]Record, 0, len(set.Articles))
	for _, a := range set.Articles {
		r := Record{
			Source:  "pubmed",
			FoundBy: []string{"pubmed"},
			PMID:    strings.TrimSpace(a.PMID),
			Title:   InlineText(a.Article.Title.Inner),
			Venue:   MetaText(a.Article.Journal.Title),
		}
		j, pg := a.Article.Journal, a.Article.Pagination
		pages := pageRange(pg.Start, pg.End)
		if pages == "" {
			pages = medlinePages(pg.Medline)
		}
		r.Publication = publicationOf("article-journal", j.Volume, j.Issue, pages, "")
		var parts []string
		for _, ab := range a.Article.Abstract {
			t := InlineText(ab.Inner)
			if t == "" {
				continue
			}
			if l := textkit.CleanLine(ab.Label); l != "" && !strings.EqualFold(l, "unlabelled") {
				t = l + ": " + t
			}
			parts = append(parts, t)
		}
		r.Abstract = CleanAbstract(strings.Join(parts, " "))
		for _, au := range a.Article.Authors {
			n := textkit.CleanLine(strings.TrimSpace(au.Fore + " " + au.Last))
			if n == "" {
				n = textkit.CleanLine(au.Collective)
			}
			if n != "" {
				r.Authors = append(r.Authors, n)
				r.AuthorsFiled = append(r.AuthorsFiled, FiledName(au.Last, au.Fore, au.Collective))
			}
		}
		r.Year = leadingYear(a.Article.Journal.PubDate.Year)
		if r.Year == 0 {
			r.Year = leadingYear(a.Article.Journal.PubDate.MedlineDate)
		}
		if r.Year == 0 && len(a.Article.ArticleDate) > 0 {
			r.Year = leadingYear(a.Article.ArticleDate[0].Year)
		}
		for _, id := range a.IDs {
			v := textkit.CleanLine(id.Value)
			switch strings.ToLower(id.Type) {
			case "doi":
				if r.DOI == "" {
					r.DOI = NormalizeDOI(v)
				}
			case "pmc":
				r.PMCID = strings.ToUpper(v)
			}
		}
		for _, el := range a.Article.ELocations {
			if strings.EqualFold(el.Type, "doi") && r.DOI == "" {
				r.DOI = NormalizeDOI(el.Value)
			}
		}
		if r.PMID == "" && r.Title == "" {
			continue
		}
		if r.PMID != "" {
			r.URL = "https://pubmed.ncbi.nlm.nih.gov/" + r.PMID + "/"
		}
		if r.PMCID != "" {
			r.PDFURL = PMCPDFURL(r.PMCID)
		}
		AssignKey(&r)
		recs = append(recs, r)
	}
	return recs, nil
}

// PMCPDFURL is the open-access PDF of a PubMed Central article, served
// directly (no HTML interstitial) by Europe PMC.
func PMCPDFURL(pmcid string) string {
	pmcid = strings.ToUpper(strings.TrimSpace(pmcid))
	if !strings.HasPrefix(pmcid, "PMC") {
		pmcid = "PMC" + pmcid
	}
	return "https://europepmc.org/articles/" + pmcid + "?pdf=render"
}

var yearRe = regexp.MustCompile(`\b(1[5-9]\d\d|20\d\d)\b`)

func leadingYear(s string) int {
	if m := yearRe.FindString(s); m != "" {
		y, _ := strconv.Atoi(m)
		return y
	}
	return 0
}
