package corpus

import (
	"fmt"
	"strings"
)

// Libraries as the person manages them: found by their file, forgotten,
// and an item whose ID came to name another work told apart from one
// retitled.

// LibraryOf is the library imported from origin (a file's absolute path,
// Zotero's folder), nil when none is.
func (m *Manifest) LibraryOf(origin string) *LibraryEntry {
	for _, l := range m.Libraries {
		if l.Origin == origin {
			return l
		}
	}
	return nil
}

// RemoveLibrary forgets the library named name: its items leave the
// corpus (their text and records are no longer searched) and it leaves the
// list. It returns how many items it held.
func RemoveLibrary(opt Options, name string) (int, error) {
	m, err := LoadManifest(opt.Manifest)
	if err != nil {
		return 0, err
	}
	if m.Libraries[name] == nil {
		return 0, fmt.Errorf("no library %s", name)
	}
	n := 0
	for slot, e := range m.Items {
		if e.Library != name {
			continue
		}
		if err := opt.Store.PutChunks(e.Key, nil); err != nil {
			return n, err
		}
		delete(m.Items, slot)
		n++
	}
	delete(m.Libraries, name)
	return n, m.Save(opt.Manifest)
}

// sameTitle says two titles are one work's, retitled at most (half their
// words shared), not two works'.
func sameTitle(a, b string) bool {
	words := func(s string) []string {
		var out []string
		for _, w := range strings.Fields(strings.ToLower(s)) {
			if w = strings.Trim(w, ".,:;!?()“”\"'"); w != "" && !titleStopWords[w] {
				out = append(out, w)
			}
		}
		return out
	}
	wa, wb := words(a), words(b)
	in := map[string]bool{}
	for _, w := range wa {
		in[w] = true
	}
	shared := 0
	for _, w := range wb {
		if in[w] {
			shared++
		}
	}
	return 2*shared >= min(len(wa), len(wb))
}

var titleStopWords = map[string]bool{"the": true, "a": true, "an": true, "of": true, "and": true, "in": true, "on": true,
	"for": true, "to": true, "with": true}
