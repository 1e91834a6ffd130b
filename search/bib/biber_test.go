package bib

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// biber's test files (plk/biber t/tdata): every entry that is a work is
// an item, whatever its key, names, dates or encoding. @xdata and @set
// entries are containers, not works.
var entryHeads = regexp.MustCompile(`(?m)^\s*@([A-Za-z]+)\s*[{(]`)

func TestBiberTestFilesLoseNoEntry(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/biber/*.bib")
	if len(files) < 40 {
		t.Fatalf("%d biber test files", len(files))
	}
	var entries, items int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, m := range entryHeads.FindAllStringSubmatch(decodeInput(data), -1) {
			switch strings.ToLower(m[1]) {
			case "string", "comment", "preamble", "xdata", "set":
			default:
				want++
			}
		}
		got, problems := Read(f, data)
		var skipped []error
		for _, p := range problems {
			if pe, ok := p.(*ParseError); !ok || !pe.Imported {
				skipped = append(skipped, p)
			}
		}
		if len(got) != want {
			t.Errorf("%s: %d items of %d entries; problems %v", filepath.Base(f), len(got), want, skipped)
		}
		ids := map[string]bool{}
		for _, it := range got {
			if it.ID == "" || ids[strings.ToLower(it.ID)] {
				t.Errorf("%s: item %q has no ID of its own", filepath.Base(f), it.ID)
			}
			ids[strings.ToLower(it.ID)] = true
		}
		entries += want
		items += len(got)
	}
	t.Logf("biber t/tdata: %d files, %d entries, %d items", len(files), entries, items)
}
