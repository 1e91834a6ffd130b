package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHugeMetadataIsCut: a Semantic Scholar answer with a 1.3 MB title,
// a 5 MB abstract and 5,000 authors (issue 48: one such work made
// `update` take 28 s and grew the database to 44 MB) becomes a record of
// ordinary size that says what was cut; a real record is left alone.
func TestHugeMetadataIsCut(t *testing.T) {
	t.Parallel()
	authors := make([]map[string]string, 5000)
	for i := range authors {
		authors[i] = map[string]string{"name": "Author " + strings.Repeat("x", i%300)}
	}
	authors[len(authors)-1]["name"] = "Last Author"
	paper := map[string]any{
		"paperId": "abc", "title": strings.Repeat("Turing é ", 130000), "abstract": strings.Repeat("word ", 1000000),
		"year": 2024, "venue": strings.Repeat("V", 5000), "authors": authors,
	}
	body, _ := json.Marshal(map[string]any{"total": 1, "data": []any{paper}})
	recs, err := ParseSemanticScholar(body)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	r := recs[0]
	size := len(r.Title) + len(r.Abstract) + len(r.Venue)
	for _, a := range r.Authors {
		size += len(a)
	}
	if size > 200<<10 {
		t.Errorf("the record holds %d KB", size>>10)
	}
	if !utf8.ValidString(r.Title) || !strings.HasSuffix(r.Title, "…") {
		t.Errorf("title cut badly: …%q", r.Title[max(0, len(r.Title)-20):])
	}
	if len(r.Authors) != maxAuthors || r.Authors[len(r.Authors)-1] != "Last Author" {
		t.Errorf("%d authors, the last %q; want %d ending with the last author", len(r.Authors), r.Authors[len(r.Authors)-1], maxAuthors)
	}
	notes := strings.Join(r.Cut, "; ")
	for _, want := range []string{"title cut to 600 characters", "abstract cut to 20,000 characters", "venue cut to 300 characters", "authors: names cut to 200 characters", "authors: 5,000 names, kept the first 99 and the last"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the record's notes %q lack %q", notes, want)
		}
	}

	real := Record{Title: "Does GPT-4 pass the Turing test?", Abstract: strings.Repeat("We evaluated GPT-4. ", 200), Authors: []string{"Cameron R. Jones", "Benjamin K. Bergen"}, Venue: "NAACL"}
	before := real
	BoundFields(&real)
	if real.Title != before.Title || real.Abstract != before.Abstract || len(real.Authors) != 2 || real.Cut != nil {
		t.Errorf("a real record was changed: %+v", real)
	}
}

// TestRealMetadataIsNeverCut: no record of the recorded answers of any
// source (real arXiv journal references, Crossref titles, Semantic
// Scholar's long author lists) is cut: the caps are above real metadata,
// so the run's "cut" warning means a hostile or broken answer (a trial
// saw arXiv's journal references cut at a cap of 100).
func TestRealMetadataIsNeverCut(t *testing.T) {
	t.Parallel()
	parsers := map[string]func([]byte) ([]Record, error){
		"arxiv": ParseArxivFeed, "crossref": ParseCrossref, "openalex": ParseOpenAlex, "semanticscholar": ParseSemanticScholar,
	}
	for dir, parse := range parsers {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		files2, _ := filepath.Glob(filepath.Join("sourcefake", "testdata", dir, "*"))
		n := 0
		for _, f := range append(files, files2...) {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			recs, err := parse(data)
			if err != nil {
				continue // an error answer
			}
			for _, r := range recs {
				n++
				if len(r.Cut) > 0 {
					t.Errorf("%s: %q was cut: %v", f, r.Title, r.Cut)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no recorded record parsed", dir)
		}
	}
}
