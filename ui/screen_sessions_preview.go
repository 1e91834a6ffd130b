package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/themes"
)

// sessionPreview summarises the selected session (from the list data only:
// drawing must not read the store).
func (m *rootModel) sessionPreview(r *sessionRow, w, h int) string {
	st := m.st
	if r == nil || h <= 0 {
		return fitLines(nil, w, h)
	}
	s := r.s
	if rs := m.runs[s.ID]; rs != nil && rs.live() {
		// The list's copy of a live run is as old as the list: its stage
		// and tokens come from the run's events instead.
		s.Status = rs.status
		if stage := rs.currentStage(); stage != "" {
			s.Stage = string(stage)
		}
		u := rs.usage
		s.Usage.PromptTokens, s.Usage.CompletionTokens, s.Usage.EmbeddingTokens = u.PromptTokens, u.CompletionTokens, u.EmbeddingTokens
		s.CostUSD = u.CostUSD
	}
	var lines []string
	// A long question keeps a third of the pane: the status and tokens
	// below it stay in view (a trial's 4,000 characters hid them).
	q := strings.Split(wrapText(r.question, w), "\n")
	if most := max(2, h/3); len(q) > most {
		q = append(q[:most-1], trunc(q[most-1]+" …", w))
	}
	for _, l := range q {
		lines = append(lines, st.Title.Render(l))
	}
	lines = append(lines, "")
	kv := func(k, v string) string { return st.Muted.Render(padRight(k, 10)) + st.Text.Render(v) }
	lines = append(lines, kv("status", statusLabel(s.Status))+stageNote(st, s))
	if asked, _ := askedAs(s.Options); asked != "" {
		lines = append(lines, kv("asked", asked))
	}
	lines = append(lines, kv("created", s.CreatedAt.In(m.now().Location()).Format("2006-01-02 15:04")))
	lines = append(lines, kv("model", r.model+st.Subtle.Render(" · embed "+sanitizeLine(s.EmbedModel))))
	// The parts go on as many lines as the pane needs, never cut ("0 e…").
	for i, l := range packParts([]string{fmtTokens(s.Usage.PromptTokens) + " prompt", fmtTokens(s.Usage.CompletionTokens) + " completion",
		fmtTokens(s.Usage.EmbeddingTokens) + " embed"}, " · ", w-10) {
		lines = append(lines, kv(map[bool]string{true: "tokens"}[i == 0], l))
	}
	lines = append(lines, kv("cost", fmtCost(s.CostUSD)))
	if s.Warnings > 0 {
		lines = append(lines, kv("warnings", fmt.Sprint(s.Warnings)))
	}
	for i, l := range livingLines(s, m.now()) {
		lines = append(lines, kv(map[bool]string{true: "updates"}[i == 0], l))
	}
	if e := sanitizeLine(s.Error); e != "" {
		lines = append(lines, st.Error.Render(trunc("error: "+e, w)))
	}
	lines = append(lines, "")
	for _, l := range packParts(strings.Split(actionHint(s.Status), " · "), " · ", w) { // never cut ("enter: …")
		lines = append(lines, st.Subtle.Render(l))
	}
	if w < 100 && h < 10 { // stacked preview: compact
		lines = []string{
			st.Title.Render(trunc(r.question, w)),
			kv("status", statusLabel(s.Status)) + stageNote(st, s) + st.Muted.Render(" · "+r.model+" · "+fmtCost(s.CostUSD)),
			kv("tokens", fmt.Sprintf("%s prompt · %s completion", fmtTokens(s.Usage.PromptTokens), fmtTokens(s.Usage.CompletionTokens))),
		}
		if asked, _ := askedAs(s.Options); asked != "" && h >= 6 { // two rows of one question may be a review and a brief
			lines = append(lines[:2], append([]string{kv("asked", trunc(asked, w-10))}, lines[2:]...)...)
		}
		if e := sanitizeLine(s.Error); e != "" {
			lines = append(lines, st.Error.Render(trunc("error: "+e, w)))
		}
		lines = append(lines, st.Subtle.Render(actionHint(s.Status)))
	}
	return fitLines(lines, w, h)
}

func stageNote(st *themes.Styles, s store.Session) string {
	if s.Stage == "" || s.Status == store.StatusCompleted {
		return ""
	}
	return st.Subtle.Render(" (at " + sanitizeLine(s.Stage) + ")")
}

func actionHint(status string) string {
	switch status {
	case store.StatusCompleted:
		return "enter: read the report"
	case store.StatusAwaitingReview:
		return "enter or R: decide the review"
	case store.StatusInterrupted, store.StatusFailed, store.StatusCancelled:
		return "R: resume from the last checkpoint · enter: read what exists"
	case store.StatusRunning:
		return "enter: watch it live (here or from another researchtui)"
	}
	return ""
}

// packParts joins parts with sep into lines of at most w cells, a part
// never split.
func packParts(parts []string, sep string, w int) []string {
	var out []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case ansi.StringWidth(cur+sep+p) <= w:
			cur += sep + p
		default:
			out = append(out, cur)
			cur = p
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// askedAs says how a session was asked to run, which its title does not
// ("deep · review report · in German"), and in short where it differs
// from a standard run in English ("deep review de"); "" and "" when its
// options cannot be read.
func askedAs(raw json.RawMessage) (summary, short string) {
	var o runopts.Options
	if len(raw) == 0 || json.Unmarshal(raw, &o) != nil {
		return "", ""
	}
	return sanitizeLine(o.Summary()), sanitizeLine(o.Short())
}
