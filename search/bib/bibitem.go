package bib

import (
	"strings"
)

// item maps an entry's fields to an Item: BibTeX and BibLaTeX names for
// the same thing (journal and journaltitle, year and date, number and
// issue) meet in one field.
func (p *bibParser) item(e *bibEntry, dir string) Item {
	f := e.fields
	text := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(f[n]); v != "" {
				return decodeTeX(v)
			}
		}
		return ""
	}
	it := Item{
		ID:        e.key,
		Type:      bibType(e.typ, f),
		Title:     text("title"),
		Authors:   parseNames(f["author"]),
		Editors:   parseNames(f["editor"]),
		Venue:     text("journaltitle", "journal", "booktitle"),
		Volume:    text("volume"),
		Issue:     text("number", "issue"),
		Pages:     NormalizePages(text("pages")),
		Publisher: text("publisher"),
		DOI:       CleanDOI(percentDecode(decodeVerbatim(f["doi"]))),
		ISBN:      decodeVerbatim(f["isbn"]),
		ISSN:      decodeVerbatim(f["issn"]),
		Abstract:  text("abstract"),
		Language:  languageTag(text("langid", "language")),
	}
	if it.Publisher == "" {
		// institution is a report's publisher, but Mendeley fills it with an
		// article's affiliation
		switch it.Type {
		case "report", "thesis":
			it.Publisher = text("institution", "school", "organization")
		case "paper-conference", "book":
			it.Publisher = text("organization")
		}
	}
	if sub := text("subtitle"); sub != "" && it.Title != "" {
		it.Title += ": " + sub
	}
	it.Year, it.Date = bibDate(f)
	it.URL = firstURL(decodeVerbatim(f["url"]))
	if it.URL == "" {
		it.URL = firstURL(urlIn(f["howpublished"]))
	}
	if eprint := strings.TrimSpace(decodeVerbatim(f["eprint"])); eprint != "" && it.URL == "" && isArxiv(f) {
		it.URL = "https://arxiv.org/abs/" + eprint
	}
	if it.DOI == "" && strings.Contains(it.URL, "doi.org/10.") {
		it.DOI = CleanDOI(it.URL)
	}
	it.Tags = append(splitList(text("keywords"), ",;"), splitList(text("mendeley-tags"), ",;")...)
	for _, g := range append(splitList(text("groups"), ","), splitList(text("mendeley-groups"), ",")...) {
		g = strings.TrimSpace(g)
		if path, ok := p.groups[g]; ok {
			g = path
		}
		it.Collections = append(it.Collections, g)
	}
	it.Collections = append(it.Collections, p.members[strings.ToLower(e.key)]...)
	mendeley := p.mendeley || f["mendeley-groups"] != "" || f["mendeley-tags"] != ""
	for _, path := range fileField(f["file"], mendeley) {
		switch {
		case isWebURL(path):
			if it.URL == "" {
				it.URL = path
			}
		default:
			it.Files = append(it.Files, resolve(path, dir))
		}
	}
	return it
}

// bibType is the CSL type of an entry type.
func bibType(typ string, f map[string]string) string {
	switch typ {
	case "article":
		if j := strings.ToLower(f["journal"] + f["journaltitle"]); strings.HasPrefix(strings.TrimLeft(j, "{ "), "arxiv") {
			return "article" // "journal = {arXiv preprint arXiv:...}"
		}
		switch strings.ToLower(strings.Trim(f["entrysubtype"], "{} ")) { // BibLaTeX's kind of periodical
		case "newspaper":
			return "article-newspaper"
		case "magazine":
			return "article-magazine"
		}
		return "article-journal"
	// Mendeley's own types, which it writes as BibTeX entry types.
	case "book_section":
		return "chapter"
	case "web_page":
		return "webpage"
	case "magazine_article":
		return "article-magazine"
	case "newspaper_article":
		return "article-newspaper"
	case "journal", "journal_article":
		return "article-journal"
	case "conference_proceedings":
		return "paper-conference"
	case "working_paper":
		return "report"
	case "computer_program":
		return "software"
	case "encyclopedia_article":
		return "entry-encyclopedia"
	case "television_broadcast":
		return "broadcast"
	case "film":
		return "motion_picture"
	case "statute", "bill":
		return "legislation"
	case "case":
		return "legal_case"
	case "hearing":
		return "hearing"
	case "generic":
		// Mendeley's "Generic": a journal's article when it names one
		// (Better BibTeX makes every generic a journal article)
		if strings.TrimSpace(f["journal"]) != "" {
			return "article-journal"
		}
		return "document"
	case "inproceedings", "conference":
		return "paper-conference"
	case "book", "mvbook", "proceedings", "mvproceedings", "collection", "mvcollection", "reference", "mvreference":
		if bt := strings.TrimSpace(f["booktitle"]); bt != "" && !strings.EqualFold(bt, strings.TrimSpace(f["title"])) && f["maintitle"] == "" {
			return "chapter" // a chapter typed as its book: it names the book it is in
		}
		return "book"
	case "booklet":
		return "pamphlet"
	case "incollection", "inbook", "bookinbook", "suppbook", "suppcollection":
		return "chapter"
	case "inreference": // an entry of an encyclopedia or a dictionary
		return "entry-encyclopedia"
	case "phdthesis", "mastersthesis", "thesis":
		return "thesis"
	case "techreport", "report", "manual":
		return "report"
	case "online", "electronic", "www", "webpage":
		return "webpage"
	case "unpublished", "misc":
		if isArxiv(f) || f["eprint"] != "" {
			return "article" // a preprint
		}
		if typ == "unpublished" {
			return "manuscript"
		}
		return "document"
	case "dataset", "data":
		return "dataset"
	case "software", "code":
		return "software"
	case "patent":
		return "patent"
	case "periodical", "suppperiodical":
		return "periodical"
	case "legislation", "legal":
		return "legislation"
	case "jurisdiction":
		return "legal_case"
	case "standard":
		return "standard"
	case "artwork", "image":
		return "graphic"
	case "audio", "music":
		return "song"
	case "video", "movie":
		return "motion_picture"
	case "letter":
		return "personal_communication"
	case "presentation", "lecture":
		return "speech"
	case "article-journal", "paper-conference", "chapter", "manuscript", "document":
		return typ
	}
	return "document"
}

func isArxiv(f map[string]string) bool {
	for _, k := range []string{"archiveprefix", "eprinttype"} {
		if strings.EqualFold(strings.Trim(f[k], "{} "), "arxiv") {
			return true
		}
	}
	return false
}
