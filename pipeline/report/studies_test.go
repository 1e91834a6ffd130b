package report

import (
	"strings"
	"testing"
)

// TestStudiesTableCellsAreInert: untrusted titles and findings cannot add
// a link, an image, raw HTML or a column to the studies table.
func TestStudiesTableCellsAreInert(t *testing.T) {
	got := MDText("x](http://evil) ![i](http://t/p.png) <img src=x> a|b *c*\x1b[31m")
	for _, escaped := range []string{`x\](http`, `\!\[i\]`, `\<img`, `a\|b`, `\*c\*`} {
		if !strings.Contains(got, escaped) {
			t.Errorf("cell %q: want %q escaped", got, escaped)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("cell %q keeps an escape sequence", got)
	}
}
