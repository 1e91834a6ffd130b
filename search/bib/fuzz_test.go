package bib

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets check what a hostile file must never do: panic, hang,
// or give an item whose text is not valid, clean UTF-8. Seeds are the real
// exports in testdata.

func seeds(f *testing.F, exts ...string) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, n := range names {
		for _, ext := range exts {
			if strings.HasSuffix(n, ext) {
				data, err := os.ReadFile(n)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(data)
			}
		}
	}
}

func FuzzReadBibTeX(f *testing.F) {
	seeds(f, ".bib", ".biblatex")
	f.Add([]byte(`@string{a = "x"} @article{k, title = a # {\"{o}$\alpha^{2}$}, author = {{\'\i}a and b, c, d}, file = {:C$\backslash$:/x.pdf:pdf}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, _ := ReadBibTeX(data, "/lib")
		for _, it := range items {
			validItem(t, it)
		}
	})
}

func FuzzReadCSLJSON(f *testing.F) {
	seeds(f, ".json")
	f.Add([]byte(`{"id": 1, "issued": {"date-parts": [["2019", 2, "x"]]}, "author": [{"family": "a"}], "keyword": ["x"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, _ := ReadCSLJSON(data)
		for _, it := range items {
			validItem(t, it)
		}
	})
}

func FuzzReadRIS(f *testing.F) {
	seeds(f, ".ris")
	f.Add(WriteRIS(fullItems()))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, _ := ReadRIS(data)
		for _, it := range items {
			validItem(t, it)
		}
		// what was read can be written and read again
		again, _ := ReadRIS(WriteRIS(items))
		if len(again) != len(items) {
			t.Errorf("%d items written, %d read back", len(items), len(again))
		}
	})
}

func FuzzReadWoS(f *testing.F) {
	seeds(f, ".txt")
	f.Add([]byte("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU A, B\n   C, D\nTI x\n   y\nPY 2019\nBP 1\nER\nEF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, _ := ReadWoS(data)
		for _, it := range items {
			validItem(t, it)
		}
	})
}

func FuzzMathText(f *testing.F) {
	for _, s := range []string{`runs in $\mathcal{O}(n^{2})$ time`, `$\tilde{O}(\sqrt{nk})$`, `$5 and $10`, `\(\alpha\)`, `$$x$$`, `$x^{ab}$`, `$\frac{a}{b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := MathText(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("MathText(%q) = %q, not UTF-8", s, out)
		}
		if !strings.ContainsAny(s, "$\\") && out != s {
			t.Errorf("text without math changed: %q -> %q", s, out)
		}
	})
}
