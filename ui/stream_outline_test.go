package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
)

// analystStream and reviewerStream are answers as the models write them,
// cut off mid-string as a stream is.
const (
	analystStream  = `{"findings": ["E2.3", "E1.1", "E4.2"], "slots": ["2:E1.3"], "method": "Damp-heat ageing of 40 encapsulated cells at 85 \"C\" and 85% humidity", "limits": "One lab; cells from a single bat`
	reviewerStream = `{"approved": false, "summary": "The executive summary should say how complete the evidence is.", "requests": [{"kind": "clarity", "section": "Executive summary", "text": "State how well the sources answer each sub-question."}, {"kind": "structure", "section": "Research gaps", "text": "Tie the gaps to the sub-`
)

// streamingAnswer is an agent that has started and streamed text so far.
func streamingAnswer(stage pipeline.Stage, agent, text string) []pipeline.Event {
	return []pipeline.Event{
		{Type: pipeline.AgentStarted, Stage: stage, Agent: agent, Time: testNow.Add(-3 * time.Second)},
		{Type: pipeline.TokenDelta, Stage: stage, Agent: agent, Text: text[:len(text)/3], Time: testNow.Add(-2 * time.Second)},
		{Type: pipeline.TokenDelta, Stage: stage, Agent: agent, Text: text[len(text)/3:], Time: testNow.Add(-time.Second)},
	}
}

func TestOutlineOfStreamingAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // lines, in order
	}{
		{"analyst cut mid-string", analystStream, []string{
			"findings", "  • E2.3", "  • E1.1", "  • E4.2", "slots", "  • 2:E1.3",
			`method: Damp-heat ageing of 40 encapsulated cells at 85 "C" and 85% humidity`,
			"limits: One lab; cells from a single bat"}},
		{"reviewer cut in its second request", reviewerStream, []string{
			"approved: no", "summary: The executive summary should say how complete the evidence is.", "requests",
			"  • clarity · Executive summary · State how well the sources answer each sub-question.",
			"  • structure · Research gaps · Tie the gaps to the sub-"}},
		{"planner", `{"subquestions": [{"question": "How does humidity degrade perovskites?", "queries": ["perovskite humidity degradation", "moisture perovskite`, []string{
			"subquestions", "  • How does humidity degrade perovskites?", "    queries", "      • perovskite humidity degradation", "      • moisture perovskite"}},
		{"lists written before the question", `{"sub_questions": [{"queries": {"strict": "a b", "moderate": "a"}, "question": "Q1?"}, {"queries": {"strict": "c d"}, "question": "Q2`, []string{
			"sub questions", "  • Q1?", "    queries", "      strict: a b", "      moderate: a", "  • Q2", "    queries", "      strict: c d"}},
		{"a key still arriving", `{"confidence": 0.82, "key_fin`, []string{"confidence: 0.82"}},
		{"a key without its value yet", `{"confidence": 0.82, "key_findings": `, []string{"confidence: 0.82", "key findings:"}},
		{"escapes", `{"text": "a\nb \u00e9 \\ \/ \u001b[2J"}`, []string{"text: a b é \\ / \x1b[2J"}},
		{"a fenced answer", "```json\n{\"approved\": true}\n```", []string{"approved: yes"}},
		{"junk between fields", `{"a": 1, junk "b": null}`, []string{"a: 1", "b: —"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := outlineJSON(tc.in)
			if !ok {
				t.Fatalf("not taken for JSON: %q", tc.in)
			}
			if strings.Join(tc.want, "\n") != got {
				t.Errorf("outline of %q:\n%s\nwant:\n%s", tc.in, got, strings.Join(tc.want, "\n"))
			}
		})
	}
	for _, prose := range []string{"# Perovskite stability\n\nHumidity {F3.1} degrades…", "", "  plain"} {
		if _, ok := outlineJSON(prose); ok {
			t.Errorf("prose taken for JSON: %q", prose)
		}
	}
}

// The output pane shows the outline while it streams, J the raw stream;
// escapes decoded from the JSON cannot reach the terminal.
func TestOutputPaneReadableAndRaw(t *testing.T) {
	m, _, _, r := scriptedRun(t, 120, 40)
	feedRun(t, m, r, streamingAnswer(pipeline.StageReview, "reviewer", reviewerStream+`", "evil": "\u001b]0;pwned\u0007"`)...)
	out := m.render()
	if !strings.Contains(out, "clarity · Executive summary") || strings.Contains(out, `"kind"`) {
		t.Errorf("the reviewer's requests are not readable:\n%s", out)
	}
	if strings.Contains(out, "\x1b]0;") {
		t.Error("a decoded escape sequence reached the screen")
	}
	press(t, m, "J")
	if out := m.render(); !strings.Contains(out, `"kind": "clarity"`) {
		t.Errorf("J shows the raw stream:\n%s", out)
	}
	press(t, m, "J")
	if out := m.render(); strings.Contains(out, `"kind"`) {
		t.Error("J again shows the outline")
	}
}

// The outliner never panics, whatever has arrived.
func FuzzOutlineJSON(f *testing.F) {
	for _, s := range []string{analystStream, reviewerStream, `{"a":[{"b":[1,{"c":"\u12`, "[[[[", `{"\`, "```json\n{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := outlineJSON(s)
		if !ok && out != "" {
			t.Fatal("text for a non-JSON answer")
		}
	})
}
