package search

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/textkit"
)

// NormalizeTitle folds a title for matching: accents removed, lower case,
// punctuation dropped, whitespace collapsed.
func NormalizeTitle(s string) string {
	s = norm.NFKD.String(textkit.CleanLine(s))
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		default:
			space = true
		}
	}
	return b.String()
}

// AssignKey sets r.Key from the strongest identifier it has:
// doi > arxiv > pmid > s2 > openalex > pmc > (local path, web URL) > title|year. An arXiv DataCite DOI
// (10.48550/arxiv.*) counts as the arXiv ID. Every source calls it when it
// makes a record, so it also cuts the record's fields to their caps
// (record_bounds.go) and writes their math as text.
func AssignKey(r *Record) {
	// An API's title or abstract carries LaTeX math ($\mathcal{O}(n^{2})$):
	// every reader of a record gets the Unicode a person reads (O(n²)).
	r.Title, r.Abstract = bib.MathText(r.Title), bib.MathText(r.Abstract)
	BoundFields(r)
	ids := identifiers(r)
	if len(ids) > 0 {
		r.Key = ids[0]
	} else {
		r.Key = ""
	}
}

// identifiers lists a record's match keys, strongest first.
// WorkIDs are the identifiers Merge matches a work by, the preprint-to-
// published keys included.
func WorkIDs(r Record) []string { return identifiers(&r) }

func identifiers(r *Record) []string {
	var ids []string
	doi := NormalizeDOI(r.DOI)
	arxiv := r.ArxivID
	if strings.HasPrefix(doi, "10.48550/arxiv.") {
		if arxiv == "" {
			arxiv = ArxivIDFromURL(doi)
		}
		doi = ""
	}
	if doi != "" {
		ids = append(ids, "doi:"+doi)
	}
	if arxiv != "" {
		ids = append(ids, "arxiv:"+strings.ToLower(arxiv))
	}
	if r.PMID != "" {
		ids = append(ids, "pmid:"+r.PMID)
	}
	if r.S2ID != "" {
		ids = append(ids, "s2:"+r.S2ID)
	}
	if r.OpenAlexID != "" {
		ids = append(ids, "openalex:"+strings.ToUpper(r.OpenAlexID))
	}
	if r.PMCID != "" {
		ids = append(ids, "pmc:"+strings.ToUpper(r.PMCID))
	}
	if key := LocalStoreKey(*r); key != "" && (r.Source == "local" || r.Library != "") {
		// the stored key, so that a local document found by search is
		// read from its stored chunks
		ids = append(ids, key)
	}
	if r.Source == "web" && len(ids) == 0 && r.URL != "" {
		// a web page is its address: two pages may share a title
		ids = append(ids, "url:"+NormalizeURL(r.URL))
	}
	if r.Source == "materials" && len(ids) == 0 && r.URL != "" {
		ids = append(ids, "url:"+NormalizeURL(r.URL))
	}
	if t := NormalizeTitle(r.Title); t != "" {
		y := ""
		if r.Year > 0 {
			y = strconv.Itoa(r.Year)
		}
		ids = append(ids, "title:"+t+"|"+y)
	}
	return append(ids, workKeys(r)...)
}

// workKeys match a preprint to its published version, which carries
// another DOI and often another year and a trimmed title ("ChemCrow:
// Augmenting large-language models with chemistry tools", arXiv 2023, is
// "Augmenting large language models with chemistry tools", Nature Machine
// Intelligence 2024): the normalised title, and the title without a short
// name before its colon, each with the first author's family name and no
// year. Titles under four words are left out: too many works share them.
func workKeys(r *Record) []string {
	if len(r.Authors) == 0 {
		return nil
	}
	first := strings.Fields(NormalizeTitle(r.Authors[0]))
	if len(first) == 0 {
		return nil
	}
	family := first[len(first)-1]
	var keys []string
	add := func(title string) {
		t := NormalizeTitle(title)
		if len(strings.Fields(t)) < 4 {
			return
		}
		keys = append(keys, "work:"+t+"|"+family)
		// A version retitled in wording only: "Co-linear chaining with
		// overlaps and gap costs" (bioRxiv) is "Algorithms for colinear
		// chaining with overlaps and gap costs" (the journal's): without
		// a leading "algorithms for" and without spaces, they are one.
		words := strings.Fields(t)
		for len(words) > 4 && versionLead[words[0]] {
			words = words[1:]
		}
		keys = append(keys, "work~"+strings.Join(words, "")+"|"+family)
	}
	add(r.Title)
	if name, rest, ok := strings.Cut(r.Title, ":"); ok && len(strings.Fields(name)) <= 3 {
		add(rest)
	}
	return keys
}

// preprintDOI tells a preprint server's DOI (arXiv's DataCite DOIs,
// bioRxiv and medRxiv, SSRN, Research Square, Preprints.org, ChemRxiv,
// OSF's servers, TechRxiv) from a publisher's.
func preprintDOI(doi string) bool {
	for _, p := range []string{"10.48550/", "10.1101/", "10.2139/", "10.21203/", "10.20944/", "10.26434/", "10.31234/", "10.31219/", "10.31235/", "10.36227/"} {
		if strings.HasPrefix(doi, p) {
			return true
		}
	}
	return false
}

// preprintVenue tells a preprint server named as a venue from a journal
// or proceedings.
func preprintVenue(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	for _, p := range []string{"arxiv", "biorxiv", "medrxiv", "ssrn", "research square", "preprints", "chemrxiv", "psyarxiv", "osf preprints", "techrxiv", "socarxiv"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return v == "preprint"
}

// versionLead are the words a journal version puts before a preprint's
// title ("An algorithm for …", "On the …", "Towards …").
var versionLead = map[string]bool{"a": true, "an": true, "the": true, "on": true, "towards": true, "toward": true,
	"algorithms": true, "algorithm": true, "for": true, "new": true, "efficient": true, "improved": true, "faster": true}

// Merge folds records of the same work (matched on DOI, arXiv ID, PMID, S2
// ID, OpenAlex ID, then normalised title + year) into one, in first-seen
// order. The merged record keeps the richest metadata: the longest abstract
// and author list, empty fields filled from the others, the highest citation
// count, a journal venue over "arXiv", a journal DOI over an arXiv DOI, and
// the union of FoundBy. Keys are reassigned.
func Merge(records []Record) []Record {
	var groups []*Record
	parent := []int{}
	index := map[string]int{}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, rec := range records {
		rec := cloneRecord(rec)
		ids := identifiers(&rec)
		root := -1
		var others []int
		for _, id := range ids {
			if g, ok := index[id]; ok {
				g = find(g)
				switch {
				case root < 0:
					root = g
				case g < root:
					others = append(others, root)
					root = g
				case g != root:
					others = append(others, g)
				}
			}
		}
		if root < 0 {
			groups = append(groups, &rec)
			parent = append(parent, len(groups)-1)
			root = len(groups) - 1
		} else {
			mergeInto(groups[root], &rec)
			for _, o := range others {
				if find(o) == root {
					continue
				}
				mergeInto(groups[root], groups[o])
				parent[o] = root
				groups[o] = nil
			}
		}
		for _, id := range identifiers(groups[root]) {
			if _, ok := index[id]; !ok {
				index[id] = root
			}
		}
	}
	out := make([]Record, 0, len(groups))
	for _, g := range groups {
		if g != nil {
			AssignKey(g)
			out = append(out, *g)
		}
	}
	return out
}

func cloneRecord(r Record) Record {
	r.Authors = append([]string(nil), r.Authors...)
	r.FoundBy = append([]string(nil), r.FoundBy...)
	r.Collections = append([]string(nil), r.Collections...)
	r.Updates = append([]Update(nil), r.Updates...)
	if r.Data != nil {
		d := make(map[string]any, len(r.Data))
		for k, v := range r.Data {
			d[k] = v
		}
		r.Data = d
	}
	if r.Source != "" && !contains(r.FoundBy, r.Source) {
		r.FoundBy = append([]string{r.Source}, r.FoundBy...)
	}
	return r
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// mergeInto fills dst from src without losing anything dst already has.
func mergeInto(dst, src *Record) {
	for _, s := range src.FoundBy {
		if !contains(dst.FoundBy, s) {
			dst.FoundBy = append(dst.FoundBy, s)
		}
	}
	if dst.Source == "" {
		dst.Source = src.Source
	}
	dd, sd := NormalizeDOI(dst.DOI), NormalizeDOI(src.DOI)
	if dd == "" || preprintDOI(dd) && sd != "" && !preprintDOI(sd) {
		if sd != "" {
			dst.DOI = sd
		}
	}
	fill(&dst.ArxivID, src.ArxivID)
	fill(&dst.PMID, src.PMID)
	fill(&dst.S2ID, src.S2ID)
	fill(&dst.OpenAlexID, src.OpenAlexID)
	fill(&dst.PMCID, src.PMCID)
	fill(&dst.Path, src.Path)
	if dst.Library == "" && src.Library != "" {
		dst.Library, dst.LibraryID = src.Library, src.LibraryID
	}
	for _, c := range src.Collections {
		if !contains(dst.Collections, c) {
			dst.Collections = append(dst.Collections, c)
		}
	}
	fill(&dst.Title, src.Title)
	dst.Publication.fillFrom(src.Publication)
	if len(src.Authors) > len(dst.Authors) {
		dst.Authors = append([]string(nil), src.Authors...)
		dst.AuthorsFiled = nil
	}
	if len(dst.AuthorsFiled) == 0 && len(src.AuthorsFiled) == len(dst.Authors) {
		dst.AuthorsFiled = append([]string(nil), src.AuthorsFiled...) // a library's filing of the same authors
	}
	if dst.Year == 0 {
		dst.Year = src.Year
	}
	published := preprintVenue(dst.Venue) && src.Venue != "" && !preprintVenue(src.Venue)
	if dst.Venue == "" || dst.Venue == LocalVenue && src.Venue != "" || published {
		dst.Venue = src.Venue
	}
	if published {
		// The published version is the one cited: its title and year
		// (the preprint's full text stays, as its PDF link ranks first).
		if src.Title != "" {
			dst.Title = src.Title
		}
		if src.Year > 0 {
			dst.Year = src.Year
		}
	}
	if len(src.Abstract) > len(dst.Abstract) {
		dst.Abstract = src.Abstract
	}
	fill(&dst.URL, src.URL)
	if pdfRank(src.PDFURL) > pdfRank(dst.PDFURL) {
		dst.PDFURL = src.PDFURL
	}
	if dst.PDFURL == "" && dst.ArxivID != "" {
		dst.PDFURL = "https://arxiv.org/pdf/" + dst.ArxivID
	}
	if dst.PDFURL == "" && dst.PMCID != "" {
		dst.PDFURL = PMCPDFURL(dst.PMCID)
	}
	if len(src.Data) > 0 {
		if dst.Data == nil {
			dst.Data = map[string]any{}
		}
		for k, v := range src.Data {
			if _, ok := dst.Data[k]; !ok {
				dst.Data[k] = v
			}
		}
	}
	if src.Citations > dst.Citations {
		dst.Citations = src.Citations
	}
	// one source's word is enough: a retraction another source has not
	// caught up with is still a retraction
	dst.Retracted = dst.Retracted || src.Retracted
	dst.Updates = mergeUpdates(dst.Updates, src.Updates)
}

func fill(dst *string, src string) {
	if *dst == "" {
		*dst = src
	}
}

// pdfRank orders open-access PDF links: a direct arXiv or PubMed Central
// PDF is the most reliable, then any link that names a PDF (OpenAlex's
// best_oa_location, Semantic Scholar's openAccessPdf, a repository), then
// anything else; no link is worst. Equal ranks keep the first found.
func pdfRank(u string) int {
	lu := strings.ToLower(u)
	switch {
	case lu == "":
		return 0
	case strings.Contains(lu, "arxiv.org/pdf/"), strings.Contains(lu, "europepmc.org/articles/pmc") && strings.Contains(lu, "pdf"),
		strings.Contains(lu, "ncbi.nlm.nih.gov/pmc/articles/") && strings.Contains(lu, "/pdf"):
		return 3
	case strings.HasSuffix(strings.SplitN(lu, "?", 2)[0], ".pdf"), strings.Contains(lu, "/pdf"):
		return 2
	}
	return 1
}
