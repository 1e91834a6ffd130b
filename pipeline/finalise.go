package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/textkit/mdinert"
)

// stageFinalise turns the last draft into the report: the model's own
// reference list removed, every [n] resolved (unresolvable ones dropped and
// reported) and renumbered by first use, the References section written by
// code from source metadata, metrics computed, everything persisted.
func (o *orchestrator) stageFinalise(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := o.stageStart(StageFinalise, "checking citations and writing the references")
	draft, repeats := report.DropRepeats(report.StripReferences(o.lastDraft()))
	supported, cited, _ := o.grounding(draft)
	check := report.CheckCitations(draft, len(o.st.Analyses))
	if check.Removed > 0 {
		o.warn(StageFinalise, "", "%s", removedCitations(check.Removed))
	}
	if len(check.Order) == 0 && len(o.st.Analyses) > 0 {
		o.warn(StageFinalise, "", "the report cites no sources; its claims could not be checked")
	}
	rep := Report{
		SessionID:  o.session.ID,
		Language:   o.opt.Language,
		Title:      o.st.Plan.Title,
		Question:   o.opt.Question,
		Model:      o.opt.Model,
		PlanReview: o.st.PlanReview,
		Searched:   o.st.Plan.Sources,
		Reviews:    o.st.Reviews,
		Decisions:  o.st.Decisions,
	}
	var refs strings.Builder
	for i, old := range check.Order {
		an := o.st.Analyses[old-1]
		rec, _ := o.loadSource(an.SourceKey)
		cs := citedSource(i+1, rec, an)
		cs.Read = o.readAs(an.SourceKey)
		rep.Sources = append(rep.Sources, cs)
		fmt.Fprintf(&refs, "[%d] %s%s\n\n", cs.N, cs.Reference, libraryMark(cs))
	}
	text, voiced, firstLeft := report.InOwnVoice(check.Text, func(n int) string {
		if n < 1 || n > len(rep.Sources) || len(rep.Sources[n-1].Authors)+len(rep.Sources[n-1].AuthorsFiled) == 0 {
			return ""
		}
		return report.MDText(report.AuthorYear(rep.Sources[n-1])) // names from the web, as the studies table prints them
	}, o.opt.Language)
	md := mdinert.Prose(strings.TrimSpace(text))
	var citedKeys []string
	for _, old := range check.Order {
		citedKeys = append(citedKeys, o.st.Analyses[old-1].SourceKey)
	}
	rep.Funnel = o.funnel(citedKeys)
	flow := o.runFlow(citedKeys)
	rep.Flow = &flow
	rep.Rounds = o.st.Rounds
	heads := report.HeadingsFor(o.opt.Language)
	if o.plan.LitReview {
		md += "\n\n" + strings.TrimSpace(flow.FlowSection(heads.Flow, o.opt.Language))
		if table := o.studiesTable(rep.Sources); table != "" {
			md += "\n\n## " + report.StudiesHeading + "\n\n" + table
		}
	}
	var method []string
	if len(o.st.Rounds) > 0 {
		method = append(method, o.methodNote(rep.Funnel, rep.Flow))
	}
	if note := o.libraryNote(citedKeys); note != "" {
		method = append(method, note)
	}
	if line := o.verificationNote(); line != "" {
		method = append(method, line)
	}
	if note := voiceNote(voiced, firstLeft); note != "" {
		method = append(method, note)
	}
	if repeats > 0 {
		method = append(method, textkit.Plural(repeats, "sentence that repeated an earlier one was", "sentences that repeated earlier ones were")+" dropped, their citations kept on the first.")
	}
	if len(method) > 0 {
		// The translator is a model too: what it gives back is made inert.
		md += "\n\n## " + heads.Method + "\n\n" + mdinert.Prose(o.inLanguage(ctx, strings.Join(method, " ")))
	}
	md = o.closeReport(&rep, md, refs.String(), heads.References, check, supported, cited)
	rep.Warnings = o.warningList()
	if err := o.checkpoint(checkpointReport, rep); err != nil {
		return err
	}
	if _, err := o.engine.Store.UpdateSession(o.session.ID, func(s *store.Session) error {
		s.Report = md
		if rep.Title != "" {
			s.Title = shortTitle(rep.Title)
		}
		return nil
	}); err != nil {
		return err
	}
	o.emit(Event{Type: ReportReady, Stage: StageFinalise, Text: md, Count: len(rep.Sources),
		Message: fmt.Sprintf("%s of %s, %.0f%% of cited sentences supported", textkit.Plural(rep.Metrics.Citations, "citation", "citations"), textkit.Plural(rep.Metrics.DistinctSources, "source", "sources"), 100*rep.Metrics.SupportedRatio)})
	return o.stageDone(StageFinalise, start, "report ready")
}

// closeReport ends a run's or a follow-up's report alike: the references
// under its text, its citation counts and the verifier's verdicts on the
// sources it cites. It returns the whole Markdown, as rep now holds it.
func (o *orchestrator) closeReport(rep *Report, md, refs, refsHeading string, check report.CitationCheck, supported, cited int) string {
	if refs != "" {
		md += "\n\n## " + refsHeading + "\n\n" + strings.TrimSpace(refs) + "\n"
	}
	rep.Markdown = md
	rep.Metrics = CitationMetrics{Citations: check.Markers, DistinctSources: len(check.Order), Removed: check.Removed}
	if cited > 0 {
		rep.Metrics.SupportedRatio = float64(supported) / float64(cited)
	}
	o.addVerification(rep, check.Order)
	return md
}

func citedSource(n int, r search.Record, an Analysis) report.CitedSource {
	cs := report.CitedSource{
		N: n, Key: r.Key, Title: r.Title, Authors: r.Authors, AuthorsFiled: r.AuthorsFiled, Year: r.Year, Venue: r.Venue, Publication: r.Publication,
		DOI: r.DOI, ArxivID: r.ArxivID, URL: r.URL, PDFURL: r.PDFURL, Source: r.Source, Library: r.Library, LibraryID: r.LibraryID,
	}
	if len(an.Quotes) > 0 {
		cs.Quote = an.Quotes[0].Text
	}
	cs.Reference = report.APA(r)
	cs.Retracted, cs.Updates = r.Retracted, r.Updates
	if r.Retracted {
		cs.Reference = "RETRACTED: " + cs.Reference
	}
	return cs
}

// libraryMark follows the reference of a work from the person's library,
// so the reader knows which copy was read.
func libraryMark(cs report.CitedSource) string {
	if cs.Library == "" {
		return ""
	}
	return " *(your library: " + report.MDText(cs.Library) + ")*"
}

// readAs says how a source was read, from its read checkpoint: full text
// or the abstract; empty when this session has no record of reading it.
func (o *orchestrator) readAs(key string) string {
	var rr readResult
	if ok, err := o.loadCheckpoint("read/"+key, &rr); err != nil || !ok {
		return ""
	}
	if rr.FullText {
		return report.ReadFullText
	}
	return report.ReadAbstract
}

// removedCitations is the warning for citations of sources the run never
// retrieved, which finalise takes out: "1 citation pointed to a source
// that was not retrieved and was removed".
func removedCitations(n int) string {
	if n == 1 {
		return "1 citation pointed to a source that was not retrieved and was removed"
	}
	return fmt.Sprintf("%d citations pointed to sources that were not retrieved and were removed", n)
}

// voiceNote is the Method's word on the authors' first person: how many
// cited sentences were given to their authors by name, how many still
// speak as "we".
func voiceNote(voiced, left int) string {
	var parts []string
	if voiced > 0 {
		parts = append(parts, textkit.Plural(voiced, "cited sentence in its authors' first person was", "cited sentences in their authors' first person were")+" given to the authors by name")
	}
	if left > 0 {
		parts = append(parts, textkit.Plural(left, "cited sentence still speaks", "cited sentences still speak")+" in the first person (its authors', where it cites one work)")
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// studiesTable is a review's table of included studies, built by code
// from the cited sources and their analyses, so it grows with the sources
// without a generated token: who and when (with the source's number), what
// kind of work it is and how it was read, its main finding (the source's
// own first finding sentence) and the sub-questions it answers.
func (o *orchestrator) studiesTable(sources []report.CitedSource) string {
	if len(sources) == 0 {
		return ""
	}
	findings := map[string]string{}
	for _, an := range o.st.Analyses {
		findings[an.SourceKey] = report.MainFinding(an.KeyFindings)
	}
	var cands []Candidate
	_, _ = o.loadCheckpoint(CheckpointCandidates, &cands)
	var bySubQ map[string][]string
	if o.st.Found != nil {
		bySubQ = o.st.Found.BySubQ
	}
	return report.StudiesMarkdown(sources, findings, includedFor(cands, bySubQ, o.st.Plan.SubQuestions))
}

// includedFor is, per source key, the sub-questions the work was read for
// (its candidates of those sub-questions were read), sorted; for a run
// without candidates, those whose searches found it (bySubQ).
func includedFor(cands []Candidate, bySubQ map[string][]string, subqs []SubQuestion) map[string][]string {
	out := map[string][]string{}
	add := func(k, sq string) {
		if !slices.Contains(out[k], sq) {
			out[k] = append(out[k], sq)
		}
	}
	for _, c := range cands {
		if c.Read && c.SubQ != "" && c.SubQ != "rev" {
			add(c.Key, c.SubQ)
		}
	}
	if len(out) == 0 {
		for _, sq := range subqs {
			for _, k := range bySubQ[sq.ID] {
				add(k, sq.ID)
			}
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// libraryNote (part of the Method) says what a run limited to the
// person's collections did with them: which of their items were
// candidates, how many were read and cited, and why the rest were left
// out. Without it a --collection run that cites none of them says nothing
// of the library the person chose. "" when the run chose no collection.
func (o *orchestrator) libraryNote(cited []string) string {
	if len(o.opt.Collections) == 0 {
		return ""
	}
	names := report.MDText(strings.Join(o.opt.Collections, ", "))
	var cands []Candidate
	if ok, _ := o.loadCheckpoint(CheckpointCandidates, &cands); !ok {
		cands = nil
	}
	type item struct {
		read   bool
		reason string
	}
	items := map[string]*item{}
	for _, c := range cands {
		if c.Library == "" && c.Source != "local" {
			continue
		}
		it := items[c.Key]
		if it == nil {
			it = &item{}
			items[c.Key] = it
		}
		if c.Read {
			it.read = true
		} else if it.reason == "" {
			it.reason = c.Reason
		}
	}
	if len(items) == 0 {
		return fmt.Sprintf("Your library (%s) gave no candidate: none of its items matched the searches of these sub-questions.", names)
	}
	isCited := map[string]bool{}
	for _, k := range cited {
		isCited[k] = true
	}
	read, nCited := 0, 0
	why := map[string]int{}
	for k, it := range items {
		switch {
		case it.read:
			read++
		default:
			why[libraryReason(it.reason)]++
		}
		if isCited[k] {
			nCited++
		}
	}
	s := fmt.Sprintf("Your library (%s) gave %s: %d read, %d cited.", names, textkit.Plural(len(items), "candidate", "candidates"), read, nCited)
	if len(why) > 0 {
		reasons := make([]string, 0, len(why))
		for r := range why {
			reasons = append(reasons, r)
		}
		sort.Slice(reasons, func(i, j int) bool {
			return why[reasons[i]] > why[reasons[j]] || why[reasons[i]] == why[reasons[j]] && reasons[i] < reasons[j]
		})
		parts := make([]string, len(reasons))
		for i, r := range reasons {
			parts[i] = fmt.Sprintf("%d %s", why[r], r)
		}
		s += " Not read: " + joinList(parts) + "."
	}
	return s
}

// libraryReason is why a library item was not read, in the words of the
// Method.
func libraryReason(reason string) string {
	switch {
	case reason == reasonNoText:
		return "with no text to read (an item known by its title only, such as a book without its file, cannot be read)"
	case strings.HasPrefix(reason, reasonBelowFloor):
		return "below the relevance floor"
	case strings.Contains(reason, "relevance screen"):
		return "judged off topic by the relevance screen"
	case reason == reasonQuota, reason == reasonNotNear, reason == reasonFarBelow:
		return "less relevant than the sources read"
	case reason == "":
		return "not reached"
	}
	return strings.TrimPrefix(reason, "not read: ")
}
