package ui

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/textkit"
)

// runKeys is the run screen's key table.
func (m *rootModel) runKeys() keyTable {
	rs := m.runs[m.active]
	live := rs != nil && rs.live()
	back := rKeys.Back
	if !live { // nothing runs on: "(run continues)" would mislead
		back = kb([]string{"esc"}, "esc", "sessions")
	}
	return keyTable{title: "Run", groups: [][]command{
		{
			do(back, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.goTo(screenSessions)
				return m.loadSessions()
			}).footer(),
			do(rKeys.Cancel, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				text := "The run stops now. Finished stages stay saved, and R on the sessions screen resumes it later."
				if strings.HasPrefix(rs.title, updateTitle) {
					text = "The update stops now. The report stays as it was, and u on the report continues the update later."
				}
				m.dialog = newConfirmDialog("Cancel this run?", text, actCancelRun{id: rs.id}, m.now())
				return nil
			}).footer().when(live),
			do(rKeys.Review, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.openReview(rs)
				return nil
			}).footer().when(rs != nil && rs.review != nil),
			do(rKeys.Report, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				return m.openReport(rs.id, rs.title)
			}).footer().when(rs != nil && rs.status == "completed"),
			do(rKeys.WriteNow, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.notice = "writing now: downloads still under way are read from their abstracts"
				return writeNowCmd(rs.h)
			}).when(live && rs.h != nil),
			do(rKeys.Timeline, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				return loadTimelineCmd(m.svc, rs.id, rs.title)
			}).footer().when(rs != nil),
			do(rKeys.Warnings, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.showHelp = false
				m.dialog = newWarningsDialog(rs.title, rs.warnings)
				return nil
			}).when(rs != nil && len(rs.warnings) > 0),
			do(rKeys.RawOutput, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.rawOutput = !m.rawOutput
				if m.rawOutput {
					m.setNotice("output: the raw stream (J: readable)", false)
				} else {
					m.setNotice("output: readable (J: the raw stream)", false)
				}
				return nil
			}).when(rs != nil),
		},
		m.globalGroup(true),
	}}
}

var phaseIcon = map[phase]string{phasePending: "○", phaseRunning: "●", phaseDone: "✓", phaseFailed: "✗"}

func (m *rootModel) icon(p phase) string {
	st := m.st
	switch p {
	case phaseRunning:
		return st.IconRunning.Render(phaseIcon[p])
	case phaseDone:
		return st.IconDone.Render(phaseIcon[p])
	case phaseFailed:
		return st.IconFailed.Render(phaseIcon[p])
	}
	return st.IconPending.Render(phaseIcon[p])
}

// viewRun draws the live run: the stage/agent tree and source counts on the
// left, the writing agent's stream on the right, warnings and the usage bar
// below.
func (m *rootModel) viewRun(w, h int) string {
	st := m.st
	rs := m.runs[m.active]
	if rs == nil {
		return fitLines([]string{st.Muted.Render("No run selected.")}, w, h)
	}
	now := m.now()
	badge := st.Badge(rs.status).Render(statusLabel(rs.status))
	if rs.watched {
		badge = st.Muted.Render("elsewhere ") + badge
	}
	head := st.Title.Render(trunc(rs.title, max(w-ansi.StringWidth(badge)-2, 10)))
	header := head + strings.Repeat(" ", max(w-ansi.StringWidth(head)-ansi.StringWidth(badge), 1)) + badge

	bodyH := h - 3 // header, warnings, status bar
	leftW := clamp(w*45/100, 34, 52)
	rightW := w - leftW - 1
	left := m.runTree(rs, leftW, bodyH, now)
	right := m.runStream(rs, rightW, bodyH)
	sep := strings.TrimRight(strings.Repeat(st.Subtle.Render("│")+"\n", bodyH), "\n")

	var warn string
	switch n := len(rs.warnings); {
	case rs.errMsg != "":
		warn = st.Error.Render(trunc("✗ "+rs.errMsg, w))
	case rs.review != nil && rs.review.Plan != nil:
		warn = st.Warning.Render(trunc("◆ the plan waits for you before anything is searched — v to review it", w))
	case rs.review != nil:
		warn = st.Warning.Render(trunc("◆ the reviewer asks for revisions — v to decide", w))
	case n > 0:
		// The key first: the newest warning is cut to the width.
		warn = st.Subtle.Render(trunc(fmt.Sprintf("⚠ %s (W) · %s", textkit.Plural(n, "warning", "warnings"), rs.warnings[n-1]), w))
	case rs.status == "completed":
		warn = st.Success.Render("✓ report ready — enter to read it")
	}
	return header + "\n" + joinColumns(left, sep, right) + "\n" + padRight(warn, w) + "\n" + m.runStatusBar(rs, w, now)
}

// runTree lists stages with their agents, then what was found. In a short
// pane every stage keeps its line and the Sources box its room: the
// agents of finished stages fold away first, then a running stage lists
// only as many of its agents as fit ("… 3 more agents").
func (m *rootModel) runTree(rs *runView, w, h int, now time.Time) string {
	st := m.st
	const sourcesRoom = 5 // the blank line, the Sources heading and three lines
	room := max(h-sourcesRoom, len(rs.stages))
	agentsShown := 0
	for _, sr := range rs.stages {
		agentsShown += len(sr.agents)
	}
	fold := len(rs.stages)+agentsShown > room // fold finished stages' agents
	spare := room - len(rs.stages)            // lines left for agents
	if fold {
		for _, sr := range rs.stages {
			if sr.phase == phaseRunning {
				continue
			}
			for _, a := range sr.agents {
				if a.phase == phaseFailed {
					spare-- // a failed agent stays in view
				}
			}
		}
	}
	var lines []string
	for _, sr := range rs.stages {
		el := ""
		switch {
		case sr.phase == phaseRunning && !sr.started.IsZero():
			el = fmtDuration(now.Sub(sr.started))
		case sr.phase == phaseDone || sr.phase == phaseFailed:
			el = fmtDuration(sr.elapsed)
		}
		name := string(sr.stage)
		nameStyle := st.Text
		if sr.phase == phasePending {
			nameStyle = st.Subtle
		} else if sr.phase == phaseRunning {
			nameStyle = st.Heading
		}
		icon := m.icon(sr.phase)
		if sr.phase == phasePending && rs.status == "completed" {
			// The run ended without it (a follow-up the session's sources
			// answered): not pending, skipped.
			icon, el = st.Subtle.Render("–"), "skipped"
		}
		line := icon + " " + nameStyle.Render(padRight(name, w-10)) + st.Muted.Render(fmt.Sprintf("%7s", el))
		lines = append(lines, line)
		agents := sr.agents
		if fold && sr.phase != phaseRunning {
			var failed []*agentRow
			for _, a := range agents {
				if a.phase == phaseFailed {
					failed = append(failed, a)
				}
			}
			agents = failed
		}
		if fold && sr.phase == phaseRunning && len(agents) > max(spare, 1) {
			keep := max(spare-1, 0)
			for _, a := range agents[:keep] {
				lines = append(lines, m.agentLine(a, w, now))
			}
			lines = append(lines, st.Muted.Render(trunc("  … "+textkit.Plural(len(agents)-keep, "more agent", "more agents"), w)))
			spare = 0
			continue
		}
		for _, a := range agents {
			lines = append(lines, m.agentLine(a, w, now))
		}
		if fold && sr.phase == phaseRunning {
			spare -= len(agents)
		}
	}
	lines = append(lines, "")
	lines = append(lines, m.runSources(rs, w, max(4, h-len(lines)))...)
	if len(lines) > h { // keep the running part in view
		first := 0
		for i, sr := range rs.stages {
			if sr.phase == phaseRunning {
				first = i
				break
			}
		}
		if first > 0 {
			lines = lines[min(first, len(lines)-h):]
		}
	}
	return fitLines(lines, w, h)
}

// stateOrder lists source states from the most to the least interesting
// to watch: what the model works on, what is on its way, what is done.
var stateOrder = []string{pipeline.StateAnalysing, pipeline.StateReading, pipeline.StateIndexed, pipeline.StateRead, pipeline.StateQueued, pipeline.StateAnalysed, pipeline.StateSkipped}

// runSources shows how the sources flow: how many of those found are
// read, the count per state, and one line per source, busiest first.
func (m *rootModel) runSources(rs *runView, w, room int) []string {
	st := m.st
	head := st.Heading.Render("Sources")
	if n := len(rs.flow); n > 0 {
		head += st.Muted.Render(fmt.Sprintf("  read %d of %d found", n, max(rs.found, n)))
	}
	lines := []string{head}
	if rs.round != "" {
		lines = append(lines, "  "+st.Text.Render(trunc(rs.round, w-2)))
	}
	kinds := rs.sourceKinds()
	if len(kinds) == 0 {
		return append(lines, st.Subtle.Render("  none yet"))
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, rs.sources[k]))
	}
	for _, l := range strings.Split(wrapText(strings.Join(parts, " · "), w-2), "\n") {
		lines = append(lines, "  "+st.Text.Render(l))
	}
	counts := rs.flowCounts()
	var cs []string
	for _, state := range stateOrder {
		if counts[state] > 0 {
			cs = append(cs, fmt.Sprintf("%s %d", state, counts[state]))
		}
	}
	lines = append(lines, "  "+st.Muted.Render(trunc(strings.Join(cs, " · ")+fmt.Sprintf(" · %d full text · %s", rs.fullText, textkit.Plural(rs.chunks, "chunk", "chunks")), w-2)))
	for _, state := range stateOrder {
		for _, r := range rs.flow {
			if r.state != state || len(lines) >= room {
				continue
			}
			mark, style := sourceMark(state), st.Subtle
			switch state {
			case pipeline.StateAnalysing, pipeline.StateReading:
				style = st.Text
			case pipeline.StateAnalysed:
				mark = st.IconDone.Render(mark)
			}
			label := r.title
			if state == pipeline.StateSkipped && r.note != "" {
				label += " — " + r.note
			} else if r.state == pipeline.StateAnalysed && !r.full {
				label += " (abstract)"
			}
			if r.origin != "" {
				label += " ← " + r.origin
			}
			lines = append(lines, "  "+mark+" "+style.Render(trunc(label, w-4)))
		}
	}
	return lines
}

// sourceMark is a source state's one-cell mark.
func sourceMark(state string) string {
	switch state {
	case pipeline.StateAnalysing:
		return "◐"
	case pipeline.StateReading:
		return "↓"
	case pipeline.StateRead, pipeline.StateIndexed:
		return "≡"
	case pipeline.StateAnalysed:
		return "✓"
	case pipeline.StateSkipped:
		return "–"
	}
	return "·"
}

// agentLine is one agent: icon, name, elapsed, tokens, tokens/s. While an
// agent streams, tokens are estimated from characters (~4 per token) and
// marked with ~; the exact count arrives when it finishes.
func (m *rootModel) agentLine(a *agentRow, w int, now time.Time) string {
	st := m.st
	el := a.elapsed
	if a.phase == phaseRunning && !a.started.IsZero() {
		el = now.Sub(a.started)
	}
	tok := a.tokens
	mark := ""
	if !a.exactTok {
		tok, mark = a.chars/4, "~"
	}
	tps, measured := agentRate(tok, a.tps, el)
	// Agents that make no model call (search, indexing) show no tokens.
	tokS := mark + fmtTokens(tok)
	if tok == 0 {
		tokS = ""
	}
	tpsS := func(f string) string {
		s := fmt.Sprintf(f, tps)
		if !measured {
			return strings.Repeat(" ", len(s))
		}
		return s
	}
	var stats string
	if w >= 44 {
		stats = fmt.Sprintf("%6s %6s", fmtDuration(el), tokS) + tpsS(" %5.0f/s")
	} else {
		// Narrow (the tree is 36 cells at 80 columns): tighter columns keep
		// tokens/s; only a very narrow tree drops it to leave the name room.
		stats = fmt.Sprintf("%5s %5s", fmtDuration(el), tokS)
		if with := stats + tpsS(" %4.0f/s"); w-4-len(with)-1 >= 10 {
			stats = with
		}
	}
	nameW := w - 4 - len(stats) - 1
	name := a.name
	if ansi.StringWidth(name) > nameW {
		// "screener (round 2)" cut to "screener (ro…" loses what tells
		// the rounds apart: "screener r2" keeps it.
		name = roundSuffix.ReplaceAllString(name, " r$1")
	}
	return "  " + m.icon(a.phase) + " " + st.Text.Render(padRight(name, nameW)) + " " + st.Muted.Render(stats)
}

// roundSuffix is the round an agent's name ends with ("reviewer (round 2)").
var roundSuffix = regexp.MustCompile(` \(round (\d+)\)$`)

// A rate is shown only when measured over enough: at least rateMinTokens
// generated over at least rateMinWindow. An answer that arrives in one
// piece (an unstreamed call, a cached one) once showed as 983051/s.
const (
	rateMinTokens = 10
	rateMinWindow = 200 * time.Millisecond
)

// agentRate is an agent's tokens per second and whether it was measured
// over enough to mean something: the server's own rate (tokens over its
// generation time) once the agent finished, else tokens over elapsed time.
func agentRate(tok int, serverRate float64, el time.Duration) (float64, bool) {
	if tok < rateMinTokens {
		return 0, false
	}
	if serverRate > 0 {
		window := time.Duration(float64(tok) / serverRate * float64(time.Second))
		return serverRate, window >= rateMinWindow
	}
	if el < rateMinWindow {
		return 0, false
	}
	return float64(tok) / el.Seconds(), true
}

// runStream shows the streamed text of the agent that is writing: its
// thinking dimmed in a box of its own above, the answer below.
func (m *rootModel) runStream(rs *runView, w, h int) string {
	st := m.st
	title := "Output"
	if rs.writer != "" {
		title += " · " + rs.writer
	}
	lines := []string{st.Heading.Render(trunc(title, w))}
	avail := h - 1
	if rs.thinking != "" {
		thinkH := max(avail/3, 2)
		tl := lastLines(wrapText(tailForWidth(rs.thinking, w, thinkH), w-2), thinkH-1)
		lines = append(lines, st.Subtle.Render("thinking"))
		for _, l := range tl {
			lines = append(lines, st.Thinking.Render("┊ "+l))
		}
		avail = h - len(lines)
	}
	if rs.text == "" && rs.thinking == "" {
		lines = append(lines, st.Subtle.Render("waiting for a model to write…"))
	} else if rs.text != "" {
		wrapped := wrapText(tailForWidth(rs.text, w, avail), w)
		if outline, ok := rs.readable(); ok && !m.rawOutput {
			wrapped = wrapHanging(outline, w)
		}
		for _, l := range lastLines(wrapped, avail) {
			lines = append(lines, st.Text.Render(l))
		}
	}
	return fitLines(lines, w, h)
}

// readable is a JSON answer streaming in as an outline a person reads
// (stream_outline.go); false for prose, shown as it is. The outline is
// kept until more text arrives.
func (rs *runView) readable() (string, bool) {
	if rs.outlineOf != len(rs.text) || rs.outlineFor != rs.writer {
		rs.outlineOf, rs.outlineFor = len(rs.text), rs.writer
		o, ok := outlineJSON(rs.text)
		rs.outline, rs.isOutline = sanitize(o), ok // decoded escapes may hold control characters
	}
	return rs.outline, rs.isOutline
}

// wrapHanging wraps each line of an outline to w cells, continuing a
// wrapped line under its text rather than under its indent or bullet.
func wrapHanging(s string, w int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		body := strings.TrimLeft(line, " ")
		lead := len(line) - len(body)
		if rest, ok := strings.CutPrefix(body, "• "); ok {
			lead, body = lead+2, rest
		}
		if lead > w/2 {
			out = append(out, wrapText(line, w))
			continue
		}
		pad := strings.Repeat(" ", lead)
		for i, l := range strings.Split(wrapText(body, w-lead), "\n") {
			if i == 0 {
				l = line[:len(line)-len(body)] + l
			} else {
				l = pad + l
			}
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// tailForWidth cuts the text to what can possibly show in h lines of w
// cells, so wrapping costs O(screen) however long the stream is.
func tailForWidth(s string, w, h int) string {
	limit := (w + 1) * (h + 2) * 2
	if len(s) <= limit {
		return s
	}
	return capTail(s, limit)
}

// runStatusBar: prompt and completion tokens, cost, elapsed time, model.
func (m *rootModel) runStatusBar(rs *runView, w int, now time.Time) string {
	st := m.st
	u := rs.usage
	item := func(k, v string) string { return st.StatusKey.Render(k) + st.StatusItem.Render(" "+v+"  ") }
	completion := fmtTokens(u.CompletionTokens)
	if est := rs.streaming(); est > 0 {
		completion = "~" + fmtTokens(u.CompletionTokens+est)
	}
	bar := item("prompt", fmtTokens(u.PromptTokens)) + item("completion", completion)
	if w >= 100 {
		bar += item("embed", fmtTokens(u.EmbeddingTokens))
	}
	bar += st.StatusKey.Render("cost") + st.Cost.Inherit(st.StatusItem).Render(" "+fmtCost(u.CostUSD)+"  ")
	bar += item("elapsed", fmtDuration(rs.elapsed(now)))
	if rs.h != nil && rs.live() {
		if d := rs.h.Deadline(); !d.IsZero() {
			left := max(d.Sub(now), 0)
			bar += item("left", fmtDuration(left))
		}
	}
	if rs.model != "" {
		bar += item("model", rs.model)
	}
	bar = " " + bar
	return st.StatusBar.Render(padRight(bar, w))
}
