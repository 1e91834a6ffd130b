//go:build integration

package browser

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
)

// reviewReport is a literature review's report: cited sentences with
// their support, references with DOIs, and its PRISMA flow.
func reviewReport() pipeline.Report {
	f := report.Flow{
		Databases:  []report.RouteCount{{Route: "arxiv", Round: 1, Records: 30}, {Route: "openalex", Round: 1, Records: 12}},
		Other:      []report.RouteCount{{Route: "citation chasing", Round: 2, Records: 6}},
		Identified: 48, Duplicates: 20, Screened: 28, Excluded: 19,
		ExcludedWhy: []report.FlowReason{{Reason: "below the relevance floor", Count: 12}, {Reason: "more relevant sources filled the reading slots", Count: 7}},
		Sought:      9, NotRetrieved: 1, Assessed: 8, AssessedFullText: 3, AssessedAbstract: 5, Reports: 5,
		ReportsWhy: []report.FlowReason{{Reason: "analysed, not cited by the report", Count: 5}},
		Included:   3,
	}
	md := `# Perovskite stability: a review

## Background

Humidity degrades methylammonium perovskites within days [1]. Encapsulation slows the loss of efficiency [2, 3].

## Findings

Thermal cycling cracks the films [3]. A hostile title quoted by the writer: ![x](http://tracker.example/pixel.png) [click](http://tracker.example/go).

` + strings.TrimSpace(f.FlowSection("PRISMA 2020 flow", "")) + `

## Method

Searched arxiv, openalex for 2 sub-questions.

## References

[1] Smith, J. (2020). Humidity and perovskites. *Energy*, 1, 1–2. https://doi.org/10.1/a

[2] Doe, A. (2021). Encapsulation ![t](http://tracker.example/ref.png). *Solar*, 2, 3–4. https://doi.org/10.1/b

[3] Roe, B. (2022). Thermal cycling. *Films*, 3, 5–6. https://doi.org/10.1/c
`
	return pipeline.Report{
		SessionID: "01a210bc479es64eh3", Title: "Perovskite stability: a review", Question: "Why do perovskites degrade?",
		Model: "qwen3:8b", Searched: []string{"arxiv", "openalex"}, Markdown: md, Flow: &f,
		Funnel: pipeline.Funnel{Found: 28, Read: 8, Analysed: 8, Cited: 3},
		Sources: []report.CitedSource{
			{N: 1, Title: "Humidity and perovskites", Quote: "Films exposed to 80% humidity degraded in 3 days."},
			{N: 2, Title: "Encapsulation", Quote: "Encapsulated cells kept 80% efficiency."},
			{N: 3, Title: "Thermal cycling", Quote: "Cycling cracked the films."},
		},
		Support: []pipeline.CitationSupport{
			{Sentence: "Humidity degrades methylammonium perovskites within days.", N: []int{1}, Verdict: pipeline.VerdictSupported, Passage: "Films exposed to 80% humidity degraded in 3 days.", Source: 1},
			{Sentence: "Thermal cycling cracks the films.", N: []int{3}, Verdict: pipeline.VerdictSupported, Passage: "Cycling cracked the films.", Source: 3},
		},
	}
}
