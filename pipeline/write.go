package pipeline

import (
	"context"
	"fmt"
	"strings"

	"regexp"
	"strconv"

	"slices"
	"sort"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
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
	b.WriteString(o.structuredBrief()) // retrieve.go: structured data reaches the writer as data
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
	words := textkit.LanguageWords(text)
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

// The writer may state a finding by its label instead of copying it: the
// sources brief numbers each finding ("finding F3.1: ..." is source 3's
// first), and "{F3.1}" in the draft becomes that sentence with its
// citation, "... [3].". Restating a finding the program already holds
// word for word is most of what a writer copies; on one GPU each copied
// token costs the person ~20 ms, and a finding put in by label is the
// source's own sentence, cited to it, so the verifier finds it supported
// without asking the model. The writer's own words are left for what
// only it can write: the synthesis, comparisons and what is missing.

const findingsByLabel = `To state a finding as its source words it, write just its label in braces, e.g. {F2.1}: the program puts in the finding's sentence and its citation. Use your own words, with citations, only to compare, connect or qualify findings.`

// findingLabel matches "{F3.1}" (and "{f3-1}", "{F 3.1}") with the
// punctuation that may follow it.
var findingLabel = regexp.MustCompile(`\{\s*[Ff]\s*(\d+)\s*[.:-]\s*(\d+)\s*\}([.;,!?]?)`)

// expandFindings replaces each finding label with the finding, cited. A
// label that names no finding is dropped; unknown counts them.
func expandFindings(text string, analyses []Analysis) (out string, unknown int) {
	out = findingLabel.ReplaceAllStringFunc(text, func(m string) string {
		g := findingLabel.FindStringSubmatch(m)
		n, _ := strconv.Atoi(g[1])
		k, _ := strconv.Atoi(g[2])
		if n < 1 || n > len(analyses) || k < 1 || k > len(analyses[n-1].KeyFindings) {
			unknown++
			return ""
		}
		f := strings.TrimSpace(textkit.CleanLine(analyses[n-1].KeyFindings[k-1]))
		if f == "" {
			unknown++
			return ""
		}
		end := g[3]
		if end == "" {
			end = "."
			if last := f[len(f)-1]; last == '!' || last == '?' {
				end = string(last)
			}
		}
		return strings.TrimRight(f, ".!? ") + " [" + g[1] + "]" + end
	})
	return out, unknown
}

// The report's language (--language). Searching stays in the languages
// the sources need and references keep their own; the writer writes the
// report in the language asked, the Method section is translated (its
// numbers checked), and the code's own headings come from a small table.
// Matching compares words, which a translation does not share with its
// English source, so a report in another language has its cited sentences
// judged by the model (verify.go: crossLingual).

// writeInLanguage is what the writing agents are told when the report
// is not in English: every word of it in that language, citations as
// they are.
func writeInLanguage(tag string) string {
	if tag == "" {
		return ""
	}
	n := runopts.LanguageName(tag)
	return fmt.Sprintf("\nWrite the whole report in %s (%s): its title, headings and prose, even though the sources are in other languages; keep every citation [n] exactly as instructed, and keep the names of methods, datasets and authors as they are.\n", n, tag)
}

const translateSystem = `You are the translating agent of a research assistant. Translate the text the user gives into %s. Keep every number, percentage, name and source name exactly as it is. Answer with the translation only.`

// inLanguage translates code-written text (the Method section) into the
// report's language. A translation that loses or changes a number, or a
// failed call, leaves the text in English: the counts matter more than
// the language.
func (o *orchestrator) inLanguage(ctx context.Context, text string) string {
	if o.opt.Language == "" || strings.TrimSpace(text) == "" || o.meter.exhausted() {
		return text
	}
	name := runopts.LanguageName(o.opt.Language)
	a := o.startAgent(StageFinalise, "translator", "the Method section into "+name)
	resp, err := a.chat(ctx, llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: fmt.Sprintf(translateSystem, name)}, {Role: "user", Content: text}},
		Temperature: ptr(0.1),
	})
	if err != nil {
		a.warn("the Method section stays in English: %s", shortErr(err))
		a.finish("kept in English")
		return text
	}
	out := strings.TrimSpace(textkit.StripControls(stripThink(resp.Content)))
	if !slices.Equal(numbersIn(out), numbersIn(text)) || len(out) < len(text)/3 {
		a.warn("the Method section stays in English: its translation changed the counts")
		a.finish("kept in English")
		return text
	}
	a.finish(fmt.Sprintf("%d words", len(strings.Fields(out))))
	return out
}

var numberRun = regexp.MustCompile(`\d+(?:[.,]\d+)?`)

// numbersIn are the numbers of a text, sorted (a translation may reorder
// them; "3.5" and "3,5" are one number).
func numbersIn(s string) []string {
	ns := numberRun.FindAllString(s, -1)
	for i := range ns {
		ns[i] = strings.ReplaceAll(ns[i], ",", ".")
	}
	sort.Strings(ns)
	return ns
}
