package corpus

import (
	"strings"

	"github.com/researchtui/researchtui/search"
)

// The corpus's collections: each library, its collections and tags, and
// the loose documents, with their counts.

// CollectionCount is one collection of the corpus with how many documents
// it holds.
type CollectionCount struct {
	Name string `json:"name"`
	// Kind is library (all of an imported library), collection, tag, or
	// corpus (the loose documents of `corpus add`).
	Kind string `json:"kind"`
	// Library is the library it belongs to ("" for corpus).
	Library string `json:"library,omitempty"`
	// Items are the documents in it (a collection's sub-collections'
	// too); Files those read from a file, not from an abstract.
	Items int `json:"items"`
	Files int `json:"files"`
	// Source is where a library was imported from: its file, or Zotero's
	// folder or local API (libraries only).
	Source string `json:"source,omitempty"`
}

// Collections lists the corpus's collections: the loose documents, each
// library, its collections (empty ones too) and its tags.
func (m *Manifest) Collections() []CollectionCount {
	var out []CollectionCount
	if len(m.Files) > 0 {
		out = append(out, CollectionCount{Name: LooseCollection, Kind: "corpus", Items: len(m.Files), Files: len(m.Files)})
	}
	for _, l := range m.LibraryEntries() {
		counts := map[string]*CollectionCount{}
		var order []string
		put := func(name, kind string) *CollectionCount {
			k := strings.ToLower(name)
			if c := counts[k]; c != nil {
				return c
			}
			counts[k] = &CollectionCount{Name: name, Kind: kind, Library: l.Name}
			order = append(order, k)
			return counts[k]
		}
		put(l.Name, "library").Source = l.Origin
		for _, c := range l.Collections {
			put(c, "collection")
		}
		for _, e := range m.ItemEntries() {
			if e.Library != l.Name {
				continue
			}
			counted := map[string]bool{} // an item of A/B and A/C is one item of A
			for _, name := range e.Collections {
				kind := "collection"
				switch {
				case strings.EqualFold(name, l.Name):
					kind = "library"
				case strings.HasPrefix(name, "#"):
					kind = "tag"
				}
				// an item of "A/B" is in "A" too
				for _, anc := range ancestors(name, kind) {
					if counted[strings.ToLower(anc)] {
						continue
					}
					counted[strings.ToLower(anc)] = true
					c := put(anc, kind)
					c.Items++
					if e.File != "" {
						c.Files++
					}
				}
			}
		}
		for _, k := range order {
			out = append(out, *counts[k])
		}
	}
	return out
}

// ancestors are a collection path and its parents ("A/B" → A/B, A).
func ancestors(name, kind string) []string {
	out := []string{name}
	if kind != "collection" {
		return out
	}
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' {
			out = append(out, name[:i])
		}
	}
	return out
}

// UnknownCollections are the names among names that match no collection
// of the corpus (a run limited to one would search nothing).
func (m *Manifest) UnknownCollections(names []string) []string {
	known := m.Collections()
	var out []string
	for _, n := range names {
		found := false
		for _, c := range known {
			if search.InCollections(search.Record{Collections: []string{c.Name}}, []string{n}) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}
