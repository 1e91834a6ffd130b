package ui

import "strings"

// scroller is a vertical viewport over pre-rendered lines. bubbles'
// viewport measures every line's width on SetContent (for horizontal
// scrolling the report never needs), which costs ~15 ms on a 30,000-word
// report; this costs a split, and drawing is O(height).
type scroller struct {
	lines []string
	off   int
	h     int
}

func (s *scroller) SetContent(c string) {
	s.lines = strings.Split(c, "\n")
	s.SetYOffset(s.off)
}

func (s *scroller) SetHeight(h int)     { s.h = max(h, 1); s.SetYOffset(s.off) }
func (s *scroller) YOffset() int        { return s.off }
func (s *scroller) TotalLineCount() int { return len(s.lines) }
func (s *scroller) maxOffset() int      { return max(len(s.lines)-s.h, 0) }
func (s *scroller) SetYOffset(n int)    { s.off = clamp(n, 0, s.maxOffset()) }
func (s *scroller) ScrollDown(n int)    { s.SetYOffset(s.off + n) }
func (s *scroller) ScrollUp(n int)      { s.SetYOffset(s.off - n) }
func (s *scroller) PageDown()           { s.ScrollDown(s.h) }
func (s *scroller) PageUp()             { s.ScrollUp(s.h) }
func (s *scroller) GotoTop()            { s.off = 0 }
func (s *scroller) GotoBottom()         { s.off = s.maxOffset() }
func (s *scroller) AtBottom() bool      { return s.off >= s.maxOffset() }
func (s *scroller) visible() []string   { return s.lines[s.off:min(s.off+s.h, len(s.lines))] }
func (s *scroller) ScrollPercent() float64 {
	if s.maxOffset() == 0 {
		return 1
	}
	return float64(s.off) / float64(s.maxOffset())
}
