package ui

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestDump(t *testing.T) {
	if os.Getenv("DUMP") == "" {
		t.Skip()
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		m, svc := newTestModel(t, sz[0], sz[1], "dark", false)
		c := &clock{t: testNow}
		m.now = c.now
		press(t, m, "n", "W", "h", "a", "t", "enter")
		r := svc.runs[0]
		evs := scriptToReview(r.id)
		feedRun(t, m, r, evs[:len(evs)-1]...)
		fmt.Println(ansi.Strip(m.render()))
		feedRun(t, m, r, evs[len(evs)-1])
		c.advance(time.Second)
		press(t, m, "esc")
		fmt.Println(ansi.Strip(m.render()))
		press(t, m, "?")
		fmt.Println(ansi.Strip(m.render()))
	}
}
