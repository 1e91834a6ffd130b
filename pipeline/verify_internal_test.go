package pipeline

import (
	"strings"
	"testing"
)

// FuzzVerifyRepairs: whatever Markdown a writer produces, finding its cited
// sentences and repairing them never panics, and a sentence whose
// citation was removed keeps no citation.
func FuzzVerifyRepairs(f *testing.F) {
	for _, s := range []string{
		"# T\n\n## A\n\nOne claim [1]. Another [2, 3]. A third [1-2].\n- item [1]\n  - nested [2].\n",
		"Only citations [1] [2].\n[3]\n", "etc. [1]. e.g. [2]", "[1](http://x) is a link. [", "x [99]. y [0].",
		"Sentence one. [1]. Sentence two [2]!", "",
	} {
		f.Add(s)
	}
	o := &orchestrator{st: runState{Analyses: []Analysis{{SourceKey: "a"}, {SourceKey: "b"}, {SourceKey: "c"}}}}
	f.Fuzz(func(t *testing.T, md string) {
		spans := citedSpans(md)
		checks := make([]SentenceCheck, len(spans))
		for i, sp := range spans {
			if sp.start < 0 || sp.end > len(md) || sp.start > sp.end || (i > 0 && sp.start < spans[i-1].end) {
				t.Fatalf("span %d [%d,%d) out of order or range in %d bytes", i, sp.start, sp.end, len(md))
			}
			switch i % 4 {
			case 0:
				checks[i] = SentenceCheck{Action: ActionKept}
			case 1:
				checks[i] = SentenceCheck{Action: ActionUncited}
			case 2:
				checks[i] = SentenceCheck{Action: ActionRecited, Now: []string{"b"}}
			default:
				checks[i] = SentenceCheck{Action: ActionDropped}
			}
		}
		out := o.applyChecks(md, spans, checks)
		if len(spans) == 0 && strings.Count(out, "[") > strings.Count(md, "[") {
			t.Fatalf("repairs added citations to a draft without any:\n%q\n%q", md, out)
		}
	})
}
