package pipeline

import (
	"strings"
	"testing"
)

func TestFindingLabelsBecomeTheFindingsCited(t *testing.T) {
	analyses := []Analysis{
		{KeyFindings: []string{"Python is easy to learn.", "It has a large standard library."}},
		{KeyFindings: []string{"Is Python slow?"}},
	}
	for _, c := range []struct{ in, want string }{
		{"{F1.1} {F2.1}", "Python is easy to learn [1]. Is Python slow [2]?"},
		{"Both agree: {F1.2}", "Both agree: It has a large standard library [1]."},
		{"{f1-1}; and more", "Python is easy to learn [1]; and more"},
		{"{F 1.2}.", "It has a large standard library [1]."},
	} {
		got, unknown := expandFindings(c.in, analyses)
		if got != c.want || unknown != 0 {
			t.Errorf("expandFindings(%q) = %q (%d unknown), want %q", c.in, got, unknown, c.want)
		}
	}
	// A label that names no finding is left out and counted, never cited.
	got, unknown := expandFindings("A claim {F3.1} and {F1.9} here.", analyses)
	if unknown != 2 || strings.Contains(got, "[3]") || strings.Contains(got, "{") {
		t.Errorf("unknown labels: %q, %d unknown", got, unknown)
	}
}

func FuzzExpandFindings(f *testing.F) {
	f.Add("{F1.1} and {F2.3}. {f1-1}")
	f.Add("{F0.0}{F99999999999999999999.1}")
	f.Fuzz(func(t *testing.T, s string) {
		analyses := []Analysis{{KeyFindings: []string{"One.", ""}}, {KeyFindings: []string{"Two?"}}}
		out, _ := expandFindings(s, analyses)
		if findingLabel.MatchString(out) && !findingLabel.MatchString(s) {
			t.Fatalf("expansion of %q made a label: %q", s, out)
		}
	})
}
