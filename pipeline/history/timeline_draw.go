package history

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/textkit"
)

// Marks of the waterfall's bars.
const (
	markStage   = '─'
	markAgent   = '░'
	markCall    = '█' // a model request of the agent's in flight
	markResume  = '┊' // a later attempt starts here
	markWait    = '▒' // the run waited for a person's decision
	markSegment = '╌' // a run on the session: the first, a follow-up, an update
)

// minWait is the shortest wait for a person the waterfall draws: a shorter
// one is a policy deciding at once, not a person reading.
const minWait = 100 * time.Millisecond

// segment is one run on the session in the timeline: the first, then each
// follow-up and update, with its time and the chat tokens its agents used,
// so a session's later runs are not read as part of the first.
type segment struct {
	name       string
	at         int // its "segment" span's index; -1 for the first run
	start, end time.Duration
	tokens     string
}

// segments are the session's runs, the first one included, or just the
// first when there were no later runs.
func (tl Timeline) segments() []segment {
	out := []segment{{name: "the run", at: -1}}
	for i, s := range tl.Spans {
		if s.Kind == "segment" {
			out[len(out)-1].end = s.Start
			out = append(out, segment{name: s.Name, at: i, start: s.Start})
		}
	}
	out[len(out)-1].end = tl.Wall
	for k := range out {
		n := 0
		for _, s := range tl.Spans {
			if s.Kind == "agent" && s.Start >= out[k].start && (s.Start < out[k].end || k == len(out)-1) {
				n += s.Prompt + s.Completion
			}
		}
		if n > 0 {
			out[k].tokens = fmtCount(n) + " tok"
		}
	}
	return out
}

// WaterfallLine is one line of the drawn timeline. Kind says what it is,
// so a screen can style and scroll the rows and keep the rest in view:
// scale (the time axis), model (when a model request was in flight), stage,
// agent (Critical: on the critical path), wait (the run waited for a
// person's decision), segment (a run on the session: the first, a
// follow-up, an update, with its time and tokens), summary (busy time, idle gaps,
// tokens), critical (the critical path, maybe over several lines) and
// legend.
type WaterfallLine struct {
	Kind     string
	Text     string
	Critical bool
	// Name, Bar and Stats are a span row's three parts (Text joins them).
	Name, Bar, Stats string
}

// Waterfall draws the timeline as text, width columns wide: one line per
// stage and agent, a bar where it ran (solid where its model calls were in
// flight), its time and tokens; then the model's busy share, its idle gaps,
// the agents that used the most tokens and the critical path.
func (tl Timeline) Waterfall(width int) string {
	var b strings.Builder
	for _, l := range tl.Lines(width) {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Lines is Waterfall line by line.
func (tl Timeline) Lines(width int) []WaterfallLine {
	if len(tl.Spans) == 0 || tl.Wall <= 0 {
		return []WaterfallLine{{Kind: "summary", Text: "no events recorded for this session"}}
	}
	const nameW = 22
	barW := max(10, width-nameW-20)
	out := []WaterfallLine{{Kind: "scale", Text: fmt.Sprintf("%-*s %s", nameW, "", scale(tl.Wall, barW))}}
	col := func(d time.Duration) int {
		return min(max(int(float64(d)/float64(tl.Wall)*float64(barW)), 0), barW-1)
	}
	haveCalls := tl.ModelCalls > 0
	fill := func(bar []rune, from, to time.Duration, mark rune) {
		for c := col(from); c <= max(col(to), col(from)); c++ {
			bar[c] = mark
		}
	}
	row := func(kind, name string, bar []rune, stats string, critical bool) {
		name = fmt.Sprintf("%-*s", nameW, textkit.Clip(name, nameW))
		stats = strings.TrimRight(stats, " ")
		out = append(out, WaterfallLine{Kind: kind, Text: strings.TrimRight(name+" "+string(bar)+" "+stats, " "), Critical: critical,
			Name: name, Bar: string(bar), Stats: stats})
	}
	// The model's own row: solid while a request was in flight, dotted
	// while it waited.
	busy := []rune(strings.Repeat("·", barW))
	for _, s := range tl.Spans {
		if s.Kind == "wait" { // waiting for a person is not the model idling
			fill(busy, s.Start, s.End, ' ')
		}
	}
	calls := map[int][]Span{} // agent index → its model calls
	for _, s := range tl.Spans {
		if haveCalls && s.Kind == "call" || !haveCalls && s.Kind == "agent" && s.Model {
			fill(busy, s.Start, s.End, markCall)
		}
		if s.Kind == "call" && s.Parent >= 0 {
			calls[s.Parent] = append(calls[s.Parent], s)
		}
	}
	row("model", "model in flight", busy, fmt.Sprintf("%6s %7.0f%%", shortDur(tl.ModelBusy), 100*tl.ModelUtil), false)
	segments := tl.segments()
	segmentRow := func(g segment) {
		bar := []rune(strings.Repeat(" ", barW))
		fill(bar, g.start, g.end, markSegment)
		row("segment", "── "+g.name, bar, fmt.Sprintf("%6s %8s", shortDur(g.end-g.start), g.tokens), false)
	}
	if len(segments) > 1 {
		segmentRow(segments[0]) // the first run, named once there are later ones
	}
	for i, s := range tl.Spans {
		if s.Kind == "segment" {
			for _, g := range segments {
				if g.at == i {
					segmentRow(g)
				}
			}
			continue
		}
		if s.Kind == "wait" {
			if s.End-s.Start < minWait {
				continue // a policy decided at once (a headless run): nobody waited
			}
			bar := []rune(strings.Repeat(" ", barW))
			fill(bar, s.Start, s.End, markWait)
			row("wait", s.Name, bar, fmt.Sprintf("%6s", shortDur(s.End-s.Start)), false)
			continue
		}
		if s.Kind != "stage" && s.Kind != "agent" {
			continue
		}
		bar := []rune(strings.Repeat(" ", barW))
		for _, r := range tl.Resumes {
			bar[col(r)] = markResume
		}
		name := s.Name
		switch {
		case s.Kind == "stage":
			fill(bar, s.Start, s.End, markStage)
		case !haveCalls && s.Model:
			fill(bar, s.Start, s.End, markCall)
		default:
			fill(bar, s.Start, s.End, markAgent)
			for _, c := range calls[i] {
				fill(bar, c.Start, c.End, markCall)
			}
		}
		if s.Kind == "agent" {
			name = "  " + name
			if s.Critical {
				name = "› " + s.Name
			}
		}
		dur, suffix := shortDur(s.End-s.Start), ""
		if s.Open {
			// It never finished (cancelled, killed): the log knows only
			// that it ran at least until its last event.
			dur, suffix = "?", " …"
			if d := s.End - s.Start; d >= 100*time.Millisecond {
				dur = "≥" + shortDur(d)
			}
		}
		row(s.Kind, name, bar, fmt.Sprintf("%6s %8s%s", dur, spanTokens(s), suffix), s.Critical)
	}
	sum := func(s string) { out = append(out, WaterfallLine{Kind: "summary", Text: textkit.Clip(s, width)}) }
	line := fmt.Sprintf("model busy %s of %s (%.0f%%)", shortDur(tl.ModelBusy), shortDur(tl.Wall), 100*tl.ModelUtil)
	if tl.Waiting >= minWait {
		line = fmt.Sprintf("model busy %s of %s less %s waiting for you (%.0f%%)",
			shortDur(tl.ModelBusy), shortDur(tl.Wall), shortDur(tl.Waiting), 100*tl.ModelUtil)
	}
	if haveCalls {
		line += fmt.Sprintf(" in %d calls", tl.ModelCalls)
	}
	if tl.Attempts > 1 {
		line += fmt.Sprintf(" over %d attempts", tl.Attempts)
	}
	sum(line)
	if len(tl.Idle) > 0 {
		var total time.Duration
		longest := tl.Idle[0]
		for _, g := range tl.Idle {
			total += g.End - g.Start
			if g.End-g.Start > longest.End-longest.Start {
				longest = g
			}
		}
		gaps := fmt.Sprintf("%d gaps", len(tl.Idle))
		if len(tl.Idle) == 1 {
			gaps = "1 gap"
		}
		sum(fmt.Sprintf("model idle: %s, %s in all; the longest %s at %s", gaps, shortDur(total), shortDur(longest.End-longest.Start), shortDur(longest.Start)))
	}
	if top := tl.topTokens(3); top != "" {
		sum("most tokens: " + top)
	}
	if len(tl.Critical) > 0 {
		line := "critical path:"
		crit := func(s string) { out = append(out, WaterfallLine{Kind: "critical", Text: textkit.Clip(s, width)}) }
		for i, name := range tl.Critical {
			part := " " + name
			if i > 0 {
				part = " →" + part
			}
			if len([]rune(line+part)) > width {
				crit(line)
				line = "  " + strings.TrimPrefix(part, " ")
				continue
			}
			line += part
		}
		crit(line)
	}
	legend := fmt.Sprintf("%c stage  %c agent  %c model call  › critical path", markStage, markAgent, markCall)
	if !haveCalls {
		legend = fmt.Sprintf("%c stage  %c agent  %c agent using the model  › critical path", markStage, markAgent, markCall)
	}
	if tl.Waiting >= minWait {
		legend += fmt.Sprintf("  %c waiting for you", markWait)
	}
	if len(tl.segments()) > 1 {
		legend += fmt.Sprintf("  %c a run on the session", markSegment)
	}
	if len(tl.Resumes) > 0 {
		legend += fmt.Sprintf("  %c resumed", markResume)
		if tl.Paused > 0 {
			legend += " after " + shortDur(tl.Paused)
		}
	}
	out = append(out, WaterfallLine{Kind: "legend", Text: textkit.Clip(legend, width)})
	return out
}

// spanTokens is a span's tokens for its row.
func spanTokens(s Span) string {
	if n := s.Prompt + s.Completion; n > 0 {
		return fmtCount(n) + " tok"
	} else if s.Embedding > 0 {
		return fmtCount(s.Embedding) + " emb"
	}
	return ""
}

// topTokens names the n agents that used the most chat tokens.
func (tl Timeline) topTokens(n int) string {
	byName := map[string]int{}
	for _, s := range tl.Spans {
		if s.Kind == "agent" && s.Prompt+s.Completion > 0 {
			byName[s.Name] += s.Prompt + s.Completion
		}
	}
	names := make([]string, 0, len(byName))
	for k := range byName {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if byName[names[i]] != byName[names[j]] {
			return byName[names[i]] > byName[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, k := range names[:min(n, len(names))] {
		parts = append(parts, k+" "+fmtCount(byName[k]))
	}
	return strings.Join(parts, " · ")
}

func scale(wall time.Duration, w int) string {
	mid := shortDur(wall / 2)
	end := shortDur(wall)
	pad := max(1, w/2-len(mid)/2-1)
	return "0" + strings.Repeat(" ", pad) + mid + strings.Repeat(" ", max(1, w-1-pad-len(mid)-len(end))) + end
}

func shortDur(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func fmtCount(n int) string {
	if n >= 10000 {
		return fmt.Sprintf("%.0fk", float64(n)/1000)
	}
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}
