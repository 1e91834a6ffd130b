package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// peerModel answers u14app/deep-research's prompts by the rules the
// scripted model (pipelinetest.Script with Realistic and PlainReport)
// follows for researchtui's, so that the two programs are compared on what
// they ask of the same model, not on two models:
//   - the plan has one section per sub-question, and one search query each
//     (researchtui's planner gets the same sub-questions and queries);
//   - reading search results, the model picks up to four findings spread
//     over the excerpts it is given (researchtui's analyst does the same
//     per source), but writes them out, because the peer's format has no
//     way to name a sentence;
//   - the report restates one finding per cited source, grouped by
//     section, with a one-line summary and conclusion (researchtui's
//     writer: Script.report).
type peerModel struct{ topics []pipelinetest.Topic }

// isPeerCall tells the peer's calls from researchtui's: the peer's system
// prompt opens every call with this sentence.
func isPeerCall(call ollamafake.ChatCall) bool {
	return len(call.Messages) > 0 && strings.HasPrefix(call.Messages[0].Content, "You are an expert researcher.")
}

// answer names the step it answers (plan, queries, learnings, report).
func (p peerModel) answer(call ollamafake.ChatCall) (string, ollamafake.Reply) {
	var user string
	for _, m := range call.Messages {
		if m.Role == "user" {
			user += m.Content + "\n"
		}
	}
	switch {
	case strings.Contains(user, "Generate a list of sections for the report"):
		return "plan", ollamafake.Reply{Content: p.plan()}
	case strings.Contains(user, "generate a list of SERP queries"):
		return "queries", ollamafake.Reply{Content: p.queries()}
	case strings.Contains(user, "Generate a list of learnings from the contexts"):
		return "learnings", ollamafake.Reply{Content: learnings(user)}
	case strings.Contains(user, "Write a final report based on the report plan"):
		return "report", ollamafake.Reply{Content: p.report(user)}
	}
	return "other", ollamafake.Reply{Content: "I cannot help with that."}
}

func (p peerModel) plan() string {
	var b strings.Builder
	for _, t := range p.topics {
		fmt.Fprintf(&b, "## %s\nWhat the sources say about %s.\n\n", t.Question, t.Strict)
	}
	return b.String()
}

func (p peerModel) queries() string {
	var qs []map[string]string
	for _, t := range p.topics {
		qs = append(qs, map[string]string{"query": t.Strict, "researchGoal": "Find what the sources say about " + t.Strict + "."})
	}
	b, _ := json.Marshal(qs)
	return string(b)
}

var contentBlock = regexp.MustCompile(`(?s)<content index="(\d+)" url="[^"]*">\n(.*?)\n</content>`)

// learnings picks up to four excerpts spread over the contexts, as the
// scripted analyst picks its findings, and writes each one's first
// sentence with its citation.
func learnings(user string) string {
	blocks := contentBlock.FindAllStringSubmatch(user, -1)
	var b strings.Builder
	n := 0
	for i := 0; i < len(blocks) && n < 4; i += max(1, len(blocks)/4) {
		fmt.Fprintf(&b, "- %s [%s]\n", strings.TrimSuffix(firstSentence(blocks[i][2]), "."), blocks[i][1])
		n++
	}
	return b.String()
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

var (
	learningBlock = regexp.MustCompile(`(?s)<learning>\n(.*?)\n</learning>`)
	learningLine  = regexp.MustCompile(`(?m)^- (.+) \[(\d+)\]$`)
	learningRef   = regexp.MustCompile(`(?m)^\[(\d+)\]: (\S+)`)
	sourceIndex   = regexp.MustCompile(`<source index="(\d+)" url="([^"]*)">`)
)

// report restates, section by section, the first finding of each source
// the learnings cite, renumbered to the report's list of sources.
func (p peerModel) report(user string) string {
	index := map[string]string{}
	for _, m := range sourceIndex.FindAllStringSubmatch(user, -1) {
		if _, ok := index[m[2]]; !ok {
			index[m[2]] = m[1]
		}
	}
	var b strings.Builder
	b.WriteString("# Report\n\n## Executive summary\n\n")
	fmt.Fprintf(&b, "The %d sources agree on the main points.\n\n", len(index))
	used := map[string]bool{}
	for i, l := range learningBlock.FindAllStringSubmatch(user, -1) {
		urls := map[string]string{}
		for _, r := range learningRef.FindAllStringSubmatch(l[1], -1) {
			urls[r[1]] = r[2]
		}
		if i < len(p.topics) {
			fmt.Fprintf(&b, "## %s\n\n", p.topics[i].Question)
		}
		for _, f := range learningLine.FindAllStringSubmatch(l[1], -1) {
			n, ok := index[urls[f[2]]]
			if !ok || used[n] {
				continue
			}
			used[n] = true
			fmt.Fprintf(&b, "%s [%s].\n", f[1], n)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Conclusion\n\nLarger studies are needed.\n")
	return b.String()
}
