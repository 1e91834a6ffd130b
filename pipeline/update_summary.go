package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/textkit/mdinert"
)

// An update keeps the rest of the report as it was, except where the new
// works change what it says: the executive summary, the one part a reader
// takes away, gains a sentence or two when they confirm, contradict or
// extend it. The writer sees only the summary and the new section (not the
// sources again) and writes only the sentences to add, or UNCHANGED: on
// one GPU every generated token is waited for, and rewriting a summary to
// add one sentence would cost the whole summary's tokens.

const summaryUpdateSystem = `You are the writing agent of a research assistant that keeps a finished report up to date. You are given the report's executive summary and a new section saying what works published since add. If the new works confirm, contradict or extend something the summary says, write one or two sentences to add at the end of the summary that say so, citing the new works by their numbers [n] exactly as the new section does (when they contradict the summary, say which of its statements). Return only those sentences, no heading, not the summary itself. If the new works change nothing the summary says, answer only: UNCHANGED`

// summaryHeading is the draft's executive summary heading ("" when it has
// none that the words "executive summary" name).
func summaryHeading(draft string) string {
	if hs := report.RevisionTargets(draft, []string{"Executive summary"}); len(hs) == 1 {
		return hs[0]
	}
	return ""
}

// sectionBody is the body of the draft's section under heading.
func sectionBody(draft, heading string) string {
	for _, s := range report.SplitSections(draft) {
		if s.Heading == heading {
			return strings.TrimSpace(s.Body)
		}
	}
	return ""
}

var unchangedAnswer = regexp.MustCompile(`(?i)^\W*unchanged\b`)

// updatedSummary asks the writer whether the new section changes the
// summary under heading in body, and returns the new summary: the old one
// and the writer's sentences after it ("" when it stays as it was: the
// writer said so, there is no summary, or its answer was unusable, which
// is said).
func (o *orchestrator) updatedSummary(ctx context.Context, body, heading, section string) (string, error) {
	var text string
	if ok, err := o.loadCheckpoint("write/summary", &text); err != nil || ok {
		return text, err
	}
	old := sectionBody(body, heading)
	if heading == "" || old == "" {
		return "", nil
	}
	start := o.stageStart(StageWrite, "taking the new works into the executive summary")
	a := o.startAgent(StageWrite, "writer (summary)", "taking the new works into the summary")
	user := fmt.Sprintf("Executive summary now:\n<<<\n%s\n>>>\n\nWhat the works published since %s add:\n<<<\n%s\n>>>",
		old, o.follow.Since.Format("2 January 2006"), strings.TrimSpace(section))
	resp, err := a.chat(ctx, llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: summaryUpdateSystem + o.writingRules()}, {Role: "user", Content: user}},
		Temperature: ptr(0.3),
	})
	if fatal(ctx, err) {
		a.fail()
		return "", err
	}
	answer := strings.TrimSpace(textkit.StripControls(stripThink(resp.Content)))
	switch {
	case err != nil:
		a.warn("the writer could not revise the summary (%s); it is kept as it was", shortErr(err))
		a.finish("summary kept")
	case unchangedAnswer.MatchString(answer) && len(strings.Fields(answer)) <= 6:
		a.finish("the summary stands")
	default:
		if text = o.summaryFrom(answer, heading, old); text == "" {
			a.warnUnusable("the writer's revised summary was unusable; it is kept as it was")
			a.finish("summary kept")
		} else {
			a.finish(fmt.Sprintf("%d words", len(strings.Fields(text))))
		}
	}
	if err := o.checkpoint("write/summary", text); err != nil {
		return "", err
	}
	done := "the summary stands"
	if text != "" {
		done = "summary revised"
	}
	return text, o.stageDone(StageWrite, start, done)
}

// summaryFrom reads the writer's answer as small models write it: the
// sentences to add alone, under a heading, inside a whole report (its
// summary section taken), or the whole summary written again (kept as
// written when it still holds the old summary's first sentence). It is ""
// when unusable: no citation, a citation of no source, too few words, or
// a rewritten summary less than half as long as the old one (a summary cut
// short loses what the report found).
func (o *orchestrator) summaryFrom(answer, heading, old string) string {
	text := answer
	if strings.Contains("\n"+text, "\n## ") {
		text = ""
		for _, s := range report.SplitSections(answer) {
			if s.Heading != "" && report.HeadingKey(s.Heading) == report.HeadingKey(heading) {
				text = s.Body
			}
		}
	}
	text = strings.TrimSpace(mdinert.Prose(text))
	text, unknown := expandFindings(text, o.st.Analyses)
	var marks []int
	for _, m := range report.CiteGroup.FindAllStringSubmatch(text, -1) {
		marks = append(marks, report.ParseCiteGroup(m[1])...)
	}
	if unknown > 0 || len(marks) == 0 || !textkit.Plausible(text, 5) {
		return ""
	}
	for _, n := range marks {
		if n < 1 || n > len(o.st.Analyses) {
			return ""
		}
	}
	if first := strings.TrimSuffix(firstSentence(old), "."); len(first) >= 20 && strings.Contains(squash(text), squash(first)) {
		if len(strings.Fields(text))*2 < len(strings.Fields(old)) {
			return ""
		}
		return text // the whole summary, written again
	}
	return old + "\n\n" + text
}
