package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/themes"
)

// candidatesLoadedMsg brings a session's ranked candidates, read from the
// store in the Cmd.
type candidatesLoadedMsg struct {
	title string
	cands []pipeline.Candidate
	err   error
}

func loadCandidatesCmd(svc services, id, title string) tea.Cmd {
	return func() tea.Msg {
		cs, err := svc.Candidates(id)
		return candidatesLoadedMsg{title: title, cands: cs, err: err}
	}
}

// onCandidatesLoaded opens the dialog, or says why it can't.
func (m *rootModel) onCandidatesLoaded(msg candidatesLoadedMsg) tea.Cmd {
	if msg.err != nil {
		m.setNotice("candidates: "+msg.err.Error(), true)
		return nil
	}
	m.showHelp = false
	m.dialog = newCandidatesDialog(msg.title, msg.cands)
	return nil
}

// candidatesDialog lists every candidate a run considered, in the order
// it ranked them per sub-question and round, with its scores (semantic,
// lexical, coverage, phrase, relevance against the floor), the relevance
// screen's verdict and why it was or was not read: the run's choice of
// what to read is visible, not only its outcome.
type candidatesDialog struct {
	title string
	cands []pipeline.Candidate
	// read and works count distinct works: a work is a candidate of each
	// sub-question that found it, but one of the works the sources pane
	// counts ("read 8 of 42 found").
	read, works int
	pager
}

func newCandidatesDialog(title string, cs []pipeline.Candidate) *candidatesDialog {
	d := &candidatesDialog{title: sanitizeLine(title), cands: cs, pager: pager{close: "C"}}
	seen, read := map[string]bool{}, map[string]bool{}
	for _, c := range cs {
		seen[c.Key] = true
		if c.Read {
			read[c.Key] = true
		}
	}
	d.read, d.works = len(read), len(seen)
	return d
}

func (d *candidatesDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	return nil, d.key(msg.String(), len(d.cands)), nil
}

func (d *candidatesDialog) paste(string) tea.Cmd { return nil }

// view draws two lines per candidate: a mark (✓ read), its sub-question,
// round and title; then the reason and its scores, muted (in a narrow box
// the scores on a third line).
func (d *candidatesDialog) view(st *themes.Styles, w, h int) string {
	boxW := dialogWidth(w, 140)
	inner := boxW - st.Dialog.GetHorizontalFrameSize()
	// Box: border (2), title, legend; two lines of the screen stay visible.
	// A narrow box gives the scores a line of their own under the reason,
	// where one line would cut them.
	perCand := 2
	if inner < 110 {
		perCand = 3
	}
	room := max((h-2-2-2)/perCand, 1)
	d.room = room
	d.offset = min(d.offset, max(len(d.cands)-room, 0))
	shown := d.cands[d.offset:min(d.offset+room, len(d.cands))]
	title := fmt.Sprintf("Candidates · %s", d.title)
	pos := fmt.Sprintf("  read %d of %d found", d.read, d.works)
	if d.works != len(d.cands) {
		pos += fmt.Sprintf(" · %d rows", len(d.cands)) // a row per sub-question that found a work
	}
	if len(d.cands) > room {
		pos += fmt.Sprintf(" · %d–%d", d.offset+1, d.offset+len(shown))
	}
	body := []string{st.Title.Render(trunc(title, max(inner-width(pos), 10))) + st.Muted.Render(pos)}
	if len(d.cands) == 0 {
		body = append(body, st.Subtle.Render("no candidates were ranked in this session"))
	}
	for _, c := range shown {
		mark, name := "  ", st.Muted
		if c.Read {
			mark, name = st.Accent.Render("✓ "), st.Text
		}
		round := fmt.Sprintf("r%d", c.Round)
		if c.Update > 0 {
			round = fmt.Sprintf("u%d", c.Update) // found by the session's update check n
		}
		head := fmt.Sprintf("%s %s  %s", sanitizeLine(c.SubQ), round, sanitizeLine(c.Title))
		body = append(body, trunc(mark+name.Render(trunc(head, inner-2)), inner))
		why, scores := candidateScores(c)
		if perCand == 2 {
			body = append(body, st.Subtle.Render(trunc("    "+why+" · "+scores, inner)))
		} else {
			body = append(body, st.Subtle.Render(trunc("    "+why, inner)), st.Subtle.Render(trunc("    "+scores, inner)))
		}
	}
	body = append(body, st.Subtle.Render(trunc("sem semantic · lex BM25 · cov terms covered · phr phrases · rel relevance (the floor where it decided)", inner)))
	return st.Dialog.Width(boxW).Render(strings.Join(body, "\n"))
}

// candidateScores is why a candidate was or was not read, with the
// screen's verdict (unless the reason states it) and its relevance; and
// the other scores.
// The floor is shown only where it decided: in a reason that names it,
// with both numbers.
func candidateScores(c pipeline.Candidate) (why, scores string) {
	parts := []string{sanitizeLine(c.Reason)}
	if c.Screen != "" && !strings.Contains(c.Reason, "off topic") {
		parts = append(parts, "screen: "+sanitizeLine(c.Screen))
	}
	if !strings.Contains(c.Reason, "floor (") { // a reason under a floor gives both numbers
		parts = append(parts, fmt.Sprintf("rel %.2f", c.Relevance))
	}
	return strings.Join(parts, " · "), fmt.Sprintf("score %.2f sem %.2f lex %.2f cov %.2f phr %.2f", c.Score, c.Semantic, c.Lexical, c.Coverage, c.Phrase)
}
