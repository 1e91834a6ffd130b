package bib

import "strings"

// What a BibTeX entry inherits from the entries it names: crossref (a
// paper from its proceedings) and xdata (shared fields), across every file
// read together.

// resolveRefs copies into each entry what it inherits, as biber does:
// first the fields of the @xdata entries its xdata names, then every field
// of the entry its crossref names that it lacks (but the entry's own
// identity: keys, options, sets), one level deep. A part's title becomes
// the title of its whole: a proceedings' title is its paper's booktitle,
// a periodical's its article's journal, a multi-volume work's its
// volume's main title.
func resolveRefs(parsers []*bibParser) {
	byKey := map[string]*bibEntry{}
	refs := false
	for _, p := range parsers {
		for i := range p.entries {
			e := &p.entries[i]
			if k := strings.ToLower(e.key); k != "" {
				if _, dup := byKey[k]; !dup {
					byKey[k] = e
				}
			}
			refs = refs || e.fields["crossref"] != "" || e.fields["xdata"] != ""
		}
	}
	if !refs {
		return
	}
	for _, p := range parsers {
		for i := range p.entries {
			e := &p.entries[i]
			for _, k := range splitList(e.fields["xdata"], ",") {
				if x := byKey[strings.ToLower(strings.TrimSpace(k))]; x != nil && x != e {
					inherit(e, x.fields, nil)
				}
			}
		}
	}
	for _, p := range parsers {
		for i := range p.entries {
			e := &p.entries[i]
			ref := strings.TrimSpace(e.fields["crossref"])
			if ref == "" {
				continue
			}
			parent := byKey[strings.ToLower(ref)]
			if parent == nil {
				p.errs.add(&ParseError{Format: "BibTeX", Line: e.line, Key: CleanLine(e.key), Imported: true, Crossref: ref,
					Msg: "its crossref " + CleanLine(ref) + " names no entry of the files read: import the file that holds it together with this one"})
				continue
			}
			if parent == e {
				continue
			}
			inherit(e, parent.fields, titleAs(parent.typ, e.typ))
		}
	}
}

// inherit copies into e each field of from that e lacks; rename names the
// fields that take another name in e.
func inherit(e *bibEntry, from map[string]string, rename map[string]string) {
	if e.fields == nil {
		e.fields = map[string]string{}
	}
	for name, v := range from {
		if notInherited[name] || v == "" {
			continue
		}
		if to, ok := rename[name]; ok {
			name = to
		}
		if _, has := e.fields[name]; !has && len(e.fields) < maxFields {
			e.fields[name] = v
		}
	}
}

// notInherited are the fields that say what an entry is, not what it is
// about (biber's defaults).
var notInherited = setOf("ids", "crossref", "xref", "xdata", "entryset", "entrysubtype", "execute", "label", "options",
	"presort", "related", "relatedoptions", "relatedstring", "relatedtype", "shorthand", "shorthandintro", "sortkey")

var (
	asBook       = map[string]string{"title": "booktitle", "subtitle": "booksubtitle", "titleaddon": "booktitleaddon"}
	asMain       = map[string]string{"title": "maintitle", "subtitle": "mainsubtitle", "titleaddon": "maintitleaddon"}
	asJournal    = map[string]string{"title": "journaltitle", "subtitle": "journalsubtitle"}
	wholeTypes   = setOf("book", "collection", "proceedings", "reference", "mvbook", "mvcollection", "mvproceedings", "mvreference")
	partTypes    = setOf("inbook", "incollection", "inproceedings", "conference", "inreference", "bookinbook", "suppbook", "suppcollection")
	volumedTypes = setOf("book", "collection", "proceedings", "reference", "inbook", "incollection", "inproceedings", "inreference", "bookinbook")
)

// titleAs is how a child of type child takes the title of a parent of
// type parent (nil: as its own title, BibTeX's rule for the rest).
func titleAs(parent, child string) map[string]string {
	switch {
	case strings.HasPrefix(parent, "mv") && wholeTypes[parent] && volumedTypes[child]:
		return asMain
	case wholeTypes[parent] && partTypes[child]:
		return asBook
	case parent == "periodical" && child == "article":
		return asJournal
	}
	return nil
}
