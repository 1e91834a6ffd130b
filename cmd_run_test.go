package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

// The headless review prompt prints the reviewer model's words: escape
// sequences in them never reach the terminal, and the person's answer is
// read as before (here: accept request 2 only).
func TestReviewPromptStripsControlSequences(t *testing.T) {
	rv := &pipeline.ReviewRequest{Round: 1, Summary: "fine\x1b]0;pwned\x07 summary\x1b[2J", Requests: []pipeline.RevisionRequest{
		{ID: "r1", Kind: "clarity", Section: "Intro\x1b[31m", Text: "one\nline\x9b2J"},
		{ID: "r2", Kind: "structure", Section: "Gaps", Text: "tie them"},
	}}
	answers := stdinLines(strings.NewReader("2\n"))
	var out bytes.Buffer
	d, err := decide(context.Background(), pipeline.ReviewAsk, rv, answers, &out)
	if err != nil || !d.Approve || len(d.Accepted) != 1 || d.Accepted[0] != "r2" {
		t.Fatalf("decision %+v %v", d, err)
	}
	if s := out.String(); strings.ContainsAny(s, "\x1b\x07\x9b") || !strings.Contains(s, "fine summary") || !strings.Contains(s, "1. [clarity] Intro: one line\n") {
		t.Errorf("the prompt:\n%q", s)
	}
}
