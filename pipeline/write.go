package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

const writerSystem = `You are the writing agent of a research assistant. Write a research report in Markdown from the numbered sources you are given, and nothing else.
Structure:
# <title>
## Executive summary
## <one section per sub-question, titled with the sub-question>
## Consensus
## Contradictions
## Research gaps
Rules: support every factual sentence with citations of the form [n] using ONLY the source numbers given (e.g. [2] or [1, 3]), citing the source whose finding the sentence states; never invent sources, numbers, authors or results; no filler and no sweeping claims the sources do not make (every cited sentence is checked against the cited source's text, and unsupported ones lose their citation); say plainly when the sources do not answer something. Be concise: a few sentences per section. Do NOT write a references or bibliography section: it is added automatically.
`

// reviewSystem asks for a structured literature review; the PRISMA flow
// and the Method are added by the code from stored counts.
const reviewSystem = `You are the writing agent of a research assistant. Write a structured literature review in Markdown from the numbered sources you are given, and nothing else.
Structure:
# <title>
## Background
## Methods of the included studies
## Findings
### <one subsection per theme the sources share>
## Agreements and contradictions
## Gaps
Rules: support every factual sentence with citations of the form [n] using ONLY the source numbers given (e.g. [2] or [1, 3]), citing the source whose finding the sentence states; never invent sources, numbers, authors or results; say plainly when the sources do not answer something. Group findings by theme across sources, not source by source. Be concise. Do NOT write a references section, a PRISMA flow or a method section: they are added automatically from the run's records.
`

const conciseSystem = `You are the writing agent of a research assistant. Answer the question in 80 to 150 words of Markdown, starting with a "# <title>" line, from the numbered sources you are given. Support every factual sentence with citations [n] using ONLY the given source numbers. Do not write a references section: it is added automatically.
`

// writingRules close a writer's instructions: findings by label in an
// English report; in another language, the language (a label would put
// the source's English sentence into it).
func (o *orchestrator) writingRules() string {
	if o.opt.Language != "" {
		return writeInLanguage(o.opt.Language)
	}
	return findingsByLabel
}

// sourcesBrief is the numbered evidence the writer and reviewer see: [n] is
// the position in o.st.Analyses, which is what finalise resolves.
func (o *orchestrator) sourcesBrief() string {
	var b strings.Builder
	for i, an := range o.st.Analyses {
		rec, _ := o.loadSource(an.SourceKey)
		fmt.Fprintf(&b, "[%d] %s (%s)", i+1, rec.Title, report.YearOrND(rec.Year))
		if rec.Venue != "" {
			fmt.Fprintf(&b, ", %s", rec.Venue)
		}
		if rec.Retracted {
			b.WriteString(" — RETRACTED: do not cite it as evidence")
		}
		b.WriteString("\n")
		said := map[string]bool{}
		for k, f := range an.KeyFindings {
			said[f] = true
			fmt.Fprintf(&b, "  - finding F%d.%d: %s\n", i+1, k+1, f)
		}
		for _, q := range an.Quotes {
			if !said[q.Text] { // findings are quotes now; older analyses had both
				fmt.Fprintf(&b, "  - quote: \"%s\"\n", textkit.Clip(q.Text, 400))
			}
		}
		if an.Methodology != "" && !an.Degraded {
			fmt.Fprintf(&b, "  - method: %s\n", textkit.CleanLine(an.Methodology))
		}
		if an.Limitations != "" {
			fmt.Fprintf(&b, "  - limitations: %s\n", textkit.CleanLine(an.Limitations))
		}
	}
	b.WriteString(o.structuredBrief()) // materials.go: structured data reaches the writer as data
	return b.String()
}

// reportContext is the system message of every agent that works on the
// report (writer, verifier, reviewer): the question, the plan and the
// numbered sources, byte for byte the same for each call, so the model
// server's prompt cache (Ollama and vLLM keep the last prompt's prefix)
// processes it once instead of once per call. What each agent is to do
// comes in its user message.
func (o *orchestrator) reportContext() string {
	return fmt.Sprintf("You are an agent of a research assistant that writes cited research reports. The task is given in the user message.\n\nQuestion: %s\nTitle: %s\nSub-questions:\n%s\nSources:\n%s",
		o.opt.Question, o.st.Plan.Title, o.subQuestionList(), o.sourcesBrief())
}

func (o *orchestrator) subQuestionList() string {
	var b strings.Builder
	for _, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(&b, "- %s\n", sq.Question)
	}
	return b.String()
}

// write produces a draft: the first one (round 0) or a revision that
// carries out the accepted requests. A writer that fails twice is replaced
// by a draft assembled from the analyses, so a run always has a report.
func (o *orchestrator) write(ctx context.Context, round int, prior string, accepted []RevisionRequest, note string) (string, error) {
	if o.follow != nil && round == 0 {
		return o.followUpDraft(ctx)
	}
	return o.writeDraft(ctx, round, prior, accepted, note)
}

// writeRevision rewrites a report as a person asked (a follow-up that asks
// for a change).
func (o *orchestrator) writeRevision(ctx context.Context, prior, ask string) (string, error) {
	return o.writeDraft(ctx, 1, prior, nil, ask)
}

func (o *orchestrator) writeDraft(ctx context.Context, round int, prior string, accepted []RevisionRequest, note string) (string, error) {
	name := "writer"
	what := "writing the report"
	if round > 0 {
		name, what = fmt.Sprintf("writer (revision %d)", round), "revising the report"
	}
	a := o.startAgent(StageWrite, name, what)
	var user strings.Builder
	switch {
	case o.plan.Concise:
		user.WriteString(conciseSystem)
	case o.plan.LitReview:
		user.WriteString(reviewSystem)
	default:
		user.WriteString(writerSystem)
	}
	user.WriteString(o.writingRules())
	user.WriteString("\n")
	var targets []string // the sections a revision rewrites; nil: all of it
	if round > 0 {
		if note == "" {
			named := make([]string, len(accepted))
			for i, r := range accepted {
				named[i] = r.Section
			}
			targets = report.RevisionTargets(prior, named)
		}
		fmt.Fprintf(&user, "\nYour previous draft:\n<<<\n%s\n>>>\n\nRevise it, carrying out these requests and keeping everything else that is good:\n", prior)
		for _, r := range accepted {
			fmt.Fprintf(&user, "- [%s] section %q: %s\n", r.Kind, r.Section, r.Text)
		}
		if note != "" {
			fmt.Fprintf(&user, "Note from the person reading: %s\n", note)
		}
		if targets != nil {
			fmt.Fprintf(&user, "Rewrite only these sections: %s. Return only them, each starting with its heading line exactly as in the draft; the rest of the draft is kept as it is.", strings.Join(targets, ", "))
		} else {
			user.WriteString("Return the whole revised report.")
		}
	}
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: o.reportContext()}, {Role: "user", Content: user.String()}},
		Temperature: ptr(0.3),
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := a.chat(ctx, req)
		if fatal(ctx, err) {
			a.fail()
			return "", err
		}
		if err == nil {
			text := o.withFindings(a, textkit.StripControls(stripThink(resp.Content)))
			if targets != nil {
				if spliced, ok := report.SpliceSections(prior, text); ok {
					text = spliced
				} else if !strings.HasPrefix(text, "# ") {
					// Neither sections nor a whole report: ask again.
					text = ""
				}
			}
			if problem := o.unusableDraft(text); problem == "" {
				a.finish(fmt.Sprintf("%d words", len(strings.Fields(text))))
				return text, nil
			} else {
				err = fmt.Errorf("the draft was unusable: %s", problem)
			}
		}
		lastErr = err
		o.budgetWarn(StageWrite, err)
		if ctx.Err() != nil || isBudget(err) {
			break
		}
	}
	o.warnOutcome(a.stage, a.name, OutcomeAssembled, "the writer failed (%s); the report is assembled from the analyses instead", shortErr(lastErr))
	a.finish("assembled from analyses")
	if round > 0 && prior != "" {
		return prior, nil
	}
	return o.assembledDraft(), nil
}

// withFindings puts in the findings the writer named by label, and tells
// the person when it named findings that do not exist.
func (o *orchestrator) withFindings(a *agentCall, text string) string {
	text, unknown := expandFindings(text, o.st.Analyses)
	if unknown > 0 {
		a.warn("the writer named %d finding(s) that do not exist; they were left out", unknown)
	}
	return text
}

// unusableDraft says why a draft can't be a report, or "" when it can: a
// report has prose, and cites the sources it was given.
func (o *orchestrator) unusableDraft(text string) string {
	minWords := 40
	if o.plan.Concise {
		minWords = 20
	}
	words := languageWords(text)
	switch {
	case words < minWords:
		return fmt.Sprintf("%d words of prose", words)
	case len(o.st.Analyses) > 0 && len(report.CheckCitations(text, len(o.st.Analyses)).Order) == 0:
		return "it cites none of the sources"
	}
	return ""
}

// assembledDraft is a report built without a model: each sub-question with
// the findings of the sources retrieved for it, cited.
func (o *orchestrator) assembledDraft() string {
	num := map[string]int{}
	for i, an := range o.st.Analyses {
		num[an.SourceKey] = i + 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n## Executive summary\n\nThis report was assembled from the source analyses because the writing model was unavailable. It lists what each source found for each sub-question.\n\n", o.st.Plan.Title)
	for _, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(&b, "## %s\n\n", sq.Question)
		wrote := false
		seen := map[string]bool{}
		for _, c := range o.st.Contexts[sq.ID] {
			n, ok := num[c.SourceKey]
			if !ok || seen[c.SourceKey] {
				continue
			}
			seen[c.SourceKey] = true
			an := o.st.Analyses[n-1]
			for _, f := range an.KeyFindings {
				fmt.Fprintf(&b, "- %s [%d]\n", strings.TrimSpace(f), n)
				wrote = true
			}
		}
		if !wrote {
			b.WriteString("The sources found do not address this sub-question.\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("## Research gaps\n\nNot assessed: the writing model was unavailable.\n")
	return b.String()
}

// stripThink removes <think> blocks some models put in their answer text.
func stripThink(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			s = s[:i]
			break
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
	s = strings.TrimSpace(s)
	// A report wrapped in a ```markdown fence is unwrapped.
	if strings.HasPrefix(s, "```") {
		if nl := strings.IndexByte(s, '\n'); nl > 0 {
			s = strings.TrimSuffix(strings.TrimSpace(s[nl+1:]), "```")
		}
	}
	return strings.TrimSpace(s)
}
