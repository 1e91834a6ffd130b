package report

import (
	"strings"
	"testing"
	"time"
)

const draftForRevision = `# Title

## Executive summary

Old summary [1].

## What is known?

Finding one [1]. Finding two [2].

## Consensus

They agree [1].

## Research gaps

Old gaps.
`

func TestRevisionRewritesOnlyTheNamedSections(t *testing.T) {
	targets := RevisionTargets(draftForRevision, []string{"Executive summary", "gaps"})
	if strings.Join(targets, "|") != "## Executive summary|## Research gaps" {
		t.Fatalf("targets %q", targets)
	}
	revised := "## Executive summary\n\nNew summary [2].\n\n## Research gaps\n\nNew gaps.\n"
	got, ok := SpliceSections(draftForRevision, revised)
	if !ok {
		t.Fatal("splice refused a revision with sections")
	}
	for _, want := range []string{"New summary [2].", "New gaps.", "Finding one [1]. Finding two [2].", "They agree [1].", "# Title"} {
		if !strings.Contains(got, want) {
			t.Errorf("spliced report lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"Old summary", "Old gaps"} {
		if strings.Contains(got, gone) {
			t.Errorf("spliced report keeps %q", gone)
		}
	}
	if strings.Index(got, "New summary") > strings.Index(got, "What is known?") {
		t.Errorf("the summary moved:\n%s", got)
	}
}

func TestRevisionOfAnUnknownSectionRewritesTheWholeReport(t *testing.T) {
	if got := RevisionTargets(draftForRevision, []string{"the whole report"}); got != nil {
		t.Errorf("targets %q, want nil (whole report)", got)
	}
	if got := RevisionTargets(draftForRevision, nil); got != nil {
		t.Errorf("no requests: targets %q, want nil", got)
	}
}

func TestSpliceAddsANewSectionBeforeConsensus(t *testing.T) {
	got, ok := SpliceSections(draftForRevision, "Sure, here it is:\n## Methods compared\n\nA new section [2].")
	if !ok {
		t.Fatal("refused")
	}
	if i, j := strings.Index(got, "## Methods compared"), strings.Index(got, "## Consensus"); i < 0 || i > j {
		t.Errorf("new section not before Consensus:\n%s", got)
	}
	if _, ok := SpliceSections(draftForRevision, "No headings at all."); ok {
		t.Error("a revision with no section was accepted")
	}
}

// An update's heading is in the report's language; its date written out in
// English, a number elsewhere (the code knows no other month names).
func TestWhatsNewHeadingInTheReportsLanguage(t *testing.T) {
	since := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for tag, want := range map[string]string{
		"": "What's new since 2 November 2026", "en-GB": "What's new since 2 November 2026",
		"de": "Neu seit 2026-11-02", "fr-CA": "Nouveautés depuis le 2026-11-02", "ja": "2026-11-02 以降の新しい研究",
		"eo": "What's new since 2 November 2026", // a language without headings keeps the English ones
	} {
		if got := WhatsNewHeading(tag, since); got != want {
			t.Errorf("%q: %q, want %q", tag, got, want)
		}
	}
	for tag, h := range headingsByLanguage {
		if strings.Count(h.WhatsNew, "%s") != 1 {
			t.Errorf("%q: the update heading %q must hold the date once", tag, h.WhatsNew)
		}
	}
}
