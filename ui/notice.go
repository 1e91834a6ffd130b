package ui

import (
	"strconv"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// The status line's notices, which screen a notice belongs to, and what
// the model tells the person after a decision.

// pasteCutNotice says a paste onto the question line was cut to fit; the
// next paste that fits, or the form taking the line's text, clears it.
var pasteCutNotice = "a question holds at most " + strconv.Itoa(runopts.MaxQuestionChars) + " characters: the rest of the paste was left out"

func (m *rootModel) setNotice(s string, isErr bool) {
	m.notice, m.noticeErr, m.noticeAt, m.noticeUpdate = sanitizeLine(s), isErr, m.now(), m.updates
}

// goTo switches screens. A notice belongs to the screen it was given on
// (a failed xdg-open on the report, "type a question first" on the list):
// it is cleared, unless the same keypress or message gave it on the way.
func (m *rootModel) goTo(s screen) {
	if s != m.screen && m.noticeUpdate != m.updates {
		m.notice = ""
	}
	m.screen = s
}

// noticeLife is how long news ("exported to …", "started in another
// researchtui") stays on the status line; errors stay until replaced.
// The line is drawn again on the next message after it, a key, a tick
// or a change in the store.
const noticeLife = 15 * time.Second

// shownNotice is the notice the status line shows now.
func (m *rootModel) shownNotice() string {
	if !m.noticeErr && !m.noticeAt.IsZero() && m.now().Sub(m.noticeAt) > noticeLife {
		return ""
	}
	return m.notice
}

// sourcesOff are the sources this researchtui cannot search, with what
// each needs (none without an engine: tests, browsing only).
func (m *rootModel) sourcesOff() map[string]string {
	if m.cfg.Engine == nil {
		return nil
	}
	return m.cfg.Engine.SourcesOff
}

// decidedNotice says what the run does next after a decision: a plan goes
// on to the searches, a review to the revision or the final report.
func decidedNotice(planReview bool, d pipeline.Decision) string {
	switch {
	case planReview && d.Plan != nil:
		return "running the plan as you edited it…"
	case planReview:
		return "running the plan…"
	case d.Approve:
		return "revising with the accepted requests…"
	}
	return "finalising the draft…"
}
