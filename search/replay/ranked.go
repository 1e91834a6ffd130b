package replay

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// A Pool answers Semantic Scholar's /paper/search as the real API does:
// the recorded papers that hold a word of the query, best first by
// relevance to it (BM25 over the title, weighted twice, and the abstract),
// from offset, at most limit (default 100), with total, offset and next.
// A world whose search hands every query the whole pool measures the
// pipeline's ranking, not what it would meet.
type Pool struct {
	papers []json.RawMessage
	title  [][]string
	text   [][]string
	avgLen float64
	df     map[string]int
}

// NewPool is the pool of a recorded /paper/search answer ({"data":
// [papers]}), each paper served as recorded.
func NewPool(recorded []byte) (*Pool, error) {
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(recorded, &page); err != nil {
		return nil, err
	}
	p := &Pool{papers: page.Data, df: map[string]int{}}
	total := 0
	for _, raw := range page.Data {
		var f struct {
			Title    string  `json:"title"`
			Abstract *string `json:"abstract"`
		}
		_ = json.Unmarshal(raw, &f)
		t := terms(f.Title)
		x := t
		if f.Abstract != nil {
			x = append(append([]string(nil), t...), terms(*f.Abstract)...)
		}
		p.title, p.text = append(p.title, t), append(p.text, x)
		total += len(x)
		seen := map[string]bool{}
		for _, w := range x {
			if !seen[w] {
				seen[w] = true
				p.df[w]++
			}
		}
	}
	p.avgLen = math.Max(1, float64(total)/math.Max(1, float64(len(page.Data))))
	return p, nil
}

// ServeHTTP answers a search (query, offset, limit) from the pool, or 400
// for a page the real API refuses.
func (p *Pool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	offset, _ := strconv.Atoi(v.Get("offset"))
	limit, err := strconv.Atoi(v.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 100
	}
	if offset < 0 || limit > 100 {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"Requested data for this limit and/or offset is not available"}`))
		return
	}
	Write(w, 0, JSON, p.search(v.Get("query"), offset, limit))
}

// search is the answer for query, from offset (not negative), at most
// limit papers.
func (p *Pool) search(query string, offset, limit int) []byte {
	const k1, b = 1.2, 0.75
	q := terms(query)
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	n := float64(len(p.papers))
	for i := range p.papers {
		score := 0.0
		for _, t := range dedupe(q) {
			df := float64(p.df[t])
			if df == 0 {
				continue
			}
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			tf := float64(count(p.text[i], t) + count(p.title[i], t)) // the title counts twice
			if tf == 0 {
				continue
			}
			score += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(len(p.text[i]))/p.avgLen))
		}
		if score > 0 {
			hits = append(hits, hit{i, score})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	page := map[string]any{"total": len(hits), "offset": offset}
	data := []json.RawMessage{}
	for k := offset; k < len(hits) && k < offset+limit; k++ {
		data = append(data, p.papers[hits[k].i])
	}
	if offset+limit < len(hits) {
		page["next"] = offset + limit
	}
	page["data"] = data
	out, _ := json.Marshal(page)
	return out
}

// stopwords are words no search engine ranks by.
var stopwords = map[string]bool{"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true, "do": true, "does": true,
	"for": true, "from": true, "how": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true, "the": true, "to": true,
	"what": true, "which": true, "with": true, "we": true, "this": true, "that": true, "their": true, "can": true}

// terms are a text's lower-case words, stop words dropped, plurals folded.
func terms(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 2 || stopwords[w] {
			continue
		}
		if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, "s")
		}
		out = append(out, w)
	}
	return out
}

func count(ws []string, t string) int {
	n := 0
	for _, w := range ws {
		if w == t {
			n++
		}
	}
	return n
}

func dedupe(ws []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
