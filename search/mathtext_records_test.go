package search

import (
	"strings"
	"testing"
)

// Issue 46 #4, on a recorded Semantic Scholar answer: the LaTeX math in
// titles and abstracts ("$\textit{Magic: The Gathering}$", "$\log (T)$")
// reaches every reader of a record as text, with no "$" left in prose.
func TestRecordedMathBecomesText(t *testing.T) {
	t.Parallel()
	magic := false
	for _, r := range recordedTuringPool(t) {
		for _, s := range []string{r.Title, r.Abstract} {
			if strings.Contains(s, "$") && !strings.Contains(s, "`$") {
				t.Errorf("math left in %q: %.200q", r.Title, s[strings.Index(s, "$"):])
			}
		}
		magic = magic || strings.Contains(r.Title+r.Abstract, "Magic: The Gathering")
	}
	if !magic {
		t.Error(`"$\textit{Magic: The Gathering}$" did not become its text`)
	}
}
