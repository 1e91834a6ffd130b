package vector

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

func saveTo(t *testing.T, ix *Index, path, model string) int64 {
	t.Helper()
	size, err := writeIndexFile(path, model, 7, ix.snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// A saved index opens to the same answers, without tombstones, and keeps
// working (adds, removals, another save) after it is opened.
func TestIndexFileRoundTrip(t *testing.T) {
	t.Parallel()
	const dim = 40
	g := vectortest.NewTopics(2, dim, 12)
	d := g.Data(3000)
	qs := g.Queries(50)
	for _, opt := range []Options{{SwitchAt: -1}, {SwitchAt: 1, Seed: 5}} {
		t.Run(fmt.Sprintf("graph=%v", opt.SwitchAt > 0), func(t *testing.T) {
			ix := New(dim, opt)
			defer ix.Close()
			fill(t, ix, d)
			for i := 0; i < 300; i++ {
				ix.Remove(d.IDs[i*3])
			}
			vectortest.WaitIdle(t, ix)
			path := filepath.Join(t.TempDir(), "m.idx")
			saveTo(t, ix, path, "model:v1")
			back, h, err := loadIndexFile(path, "model:v1", opt)
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			if h.gen != 7 || back.Len() != 2700 || back.Dim() != dim || back.Status().Tombstones != 0 {
				t.Fatalf("reopened: gen %d, %+v", h.gen, back.Status())
			}
			if opt.SwitchAt > 0 && back.Status().Linked != 2700 {
				t.Fatalf("graph not reopened whole: %+v", back.Status())
			}
			for i, q := range qs {
				want, _ := ix.Search(q, 10)
				got, err := back.Search(q, 10)
				if err != nil {
					t.Fatal(err)
				}
				vectortest.SameHits(t, fmt.Sprintf("query %d", i), got, want)
			}
			// The mapped index takes changes and saves again.
			more := g.Data(3200)
			for i := 3000; i < 3200; i++ {
				if err := back.Add("more-"+more.IDs[i], more.Vecs[i]); err != nil {
					t.Fatal(err)
				}
			}
			back.Add(d.IDs[1], d.Vecs[2]) // replace
			back.Remove(d.IDs[4])
			vectortest.WaitIdle(t, back)
			hits, _ := back.Search(more.Vecs[3100], 1)
			if len(hits) == 0 || hits[0].ID != "more-"+more.IDs[3100] {
				t.Fatalf("vector added after opening not found: %v", hits)
			}
			path2 := filepath.Join(t.TempDir(), "m2.idx")
			saveTo(t, back, path2, "model:v1")
			again, _, err := loadIndexFile(path2, "model:v1", opt)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.Len() != back.Len() {
				t.Fatalf("Len %d after second save, want %d", again.Len(), back.Len())
			}
			for i, q := range qs {
				want, _ := back.Search(q, 10)
				got, _ := again.Search(q, 10)
				vectortest.SameHits(t, fmt.Sprintf("second save, query %d", i), got, want)
			}
		})
	}
}

// Every kind of damage is detected: at open, before anything is used, or
// (the vectors) by the check that follows it.
func TestIndexFileDamageDetected(t *testing.T) {
	t.Parallel()
	const dim = 16
	d := vectortest.NewClustered(3, dim, 4).Data(500)
	ix := graphIndex(dim)
	defer ix.Close()
	fill(t, ix, d)
	dir := t.TempDir()
	path := filepath.Join(dir, "good.idx")
	saveTo(t, ix, path, "m")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader(good)
	if err != nil {
		t.Fatal(err)
	}
	damage := map[string][]byte{
		"truncated":       good[:len(good)/2],
		"header only":     good[:headerSize],
		"short":           good[:100],
		"empty":           {},
		"not an index":    []byte(strings.Repeat("research notes\n", 400)),
		"header bit":      vectortest.Flip(good, 30),
		"model name byte": vectortest.Flip(good, 81),
	}
	for i, s := range h.sections {
		if s.len > 0 {
			damage[fmt.Sprintf("section %d", i)] = vectortest.Flip(good, int(s.off+s.len/2))
		}
	}
	for name, data := range damage {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".idx")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, _, err := loadIndexFile(p, "m", Options{})
		if name == "section 0" {
			// The vectors are verified after opening, by the check.
			if err != nil {
				t.Fatalf("%s: open: %v", name, err)
			}
			err = ix.checkFile(nil)
		}
		if ix != nil {
			ix.Close()
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	if _, _, err := loadIndexFile(path, "another-model", Options{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("file of another model: err = %v", err)
	}
	if _, _, err := loadIndexFile(filepath.Join(dir, "none.idx"), "m", Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}
