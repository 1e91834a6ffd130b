package pipeline

import (
	"strings"
	"testing"
)

// TestStudiesTableCellsAreInert: untrusted titles and findings cannot add
// a link, an image, raw HTML or a column to the studies table.
func TestStudiesTableCellsAreInert(t *testing.T) {
	got := mdText("x](http://evil) ![i](http://t/p.png) <img src=x> a|b *c*\x1b[31m")
	for _, escaped := range []string{`x\](http`, `\!\[i\]`, `\<img`, `a\|b`, `\*c\*`} {
		if !strings.Contains(got, escaped) {
			t.Errorf("cell %q: want %q escaped", got, escaped)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("cell %q keeps an escape sequence", got)
	}
}

// The Method's sentence per sub-question escapes the planner's text too.
func TestSubQuestionNoteIsInert(t *testing.T) {
	note := subQuestionNote([]SubQuestionFunnel{{ID: "q1", Question: "What ![t](http://t/p.png) <img src=x> says?", Found: 3, Relevant: 2, Read: 1}})
	if !strings.Contains(note, `\!\[t\]`) || !strings.Contains(note, `\<img`) {
		t.Errorf("unescaped: %q", note)
	}
}
