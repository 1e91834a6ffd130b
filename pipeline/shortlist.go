package pipeline

import (
	"regexp"
	"sort"

	"github.com/researchtui/researchtui/search"
)

// Who judges relevance (issue 44). Word overlap cannot tell "Turing test"
// from "software testing", so it no longer decides what is read. Each
// sub-question's candidates are ordered by ranking, and every readable
// one above a low absolute floor, up to the depth's shortlist, goes to the
// model's screen (screening.go); what is read is chosen among those the
// screen judged on topic, best ranked first (chooseByVerdict). Ranking
// only orders, and drops what is clearly unrelated: no word of the query
// and a similarity far below the pool's best. The relative floors and
// near-best cuts (selectCandidates) decide only when the screen is off or
// cannot judge (screenFallback).

const (
	// lowFloor is the absolute relevance a candidate needs to be screened
	// at all: a few words of the query, or some similarity.
	lowFloor = 0.08
	// unrelatedShare: a candidate with no word of the query whose
	// similarity is under this share of the pool's best is not screened.
	unrelatedShare = 0.6
)

// shortlist orders candidates best first and returns the places of those
// the screen judges: readable, above lowFloor, not clearly unrelated, at
// most limit. The rest get the reason they were passed over; structured
// data is always read (facts, not prose to rank).
func shortlist(cands []Candidate, recs map[string]search.Record, limit int) []int {
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	bestSem := 0.0
	for _, c := range cands {
		bestSem = max(bestSem, c.Semantic)
	}
	var out []int
	for i := range cands {
		c := &cands[i]
		r, known := recs[c.Key]
		switch {
		case r.HasData():
			c.Read, c.Reason = true, reasonStructured
		case known && !hasText(r) && c.Origin != originKnowledge:
			c.Reason = reasonNoText
		case notAWork(c.Title):
			c.Reason = reasonNotAWork
		case c.Relevance < lowFloor:
			c.Reason = belowFloor(c.Relevance, lowFloor)
		case c.Coverage == 0 && c.Phrase == 0 && c.Semantic < unrelatedShare*bestSem:
			c.Reason = reasonUnrelated
		case len(out) >= limit:
			c.Reason = reasonPastCap
		default:
			c.Read, c.Reason = false, ""
			out = append(out, i)
		}
	}
	return out
}

// chooseByVerdict marks what to read among the shortlisted candidates the
// screen judged on topic, best ranked first: at most quota of its own; one
// another sub-question already reads (claimed, may be nil) counts too
// without taking a place. On-topic candidates left for want of room keep
// reasonQuota, for the reading plan's fill (reading_plan.go).
func chooseByVerdict(cands []Candidate, idx []int, quota int, claimed func(string) bool) {
	taken := 0
	for _, i := range idx {
		c := &cands[i]
		switch {
		case c.Screen == screenOnTopic && claimed != nil && claimed(c.Key):
			c.Read, c.Reason = true, reasonDuplicate
		case c.Screen == screenOnTopic && taken < quota:
			c.Read, c.Reason = true, reasonRead
			taken++
		case c.Screen == screenOnTopic:
			c.Reason = reasonQuota
		case c.Screen == "":
			c.Reason = reasonUnjudged
		default:
			c.Reason = reasonOffTopic + " (" + offTopicWhy(c.Screen) + ")"
		}
	}
}

// frontMatter are titles of records that index a volume rather than
// report a study: a table of contents, an index, a preface.
var frontMatter = regexp.MustCompile(`(?i)^\s*(front matter|back matter|(table of )?contents|(author |subject )?index|preface|foreword|editorial board|title page|copyright( page)?|masthead|cover( page)?|list of (reviewers|referees|contributors)|acknowledge?ments?|(issue )?information( for authors)?)\s*[.:]?\s*$`)

// wholeVolume are titles of a proceedings volume itself: "Algorithms --
// ESA 2003 : 11th Annual European Symposium … : proceedings",
// "Proceedings of the 17th International Symposium on …".
var wholeVolume = regexp.MustCompile(`(?i)(^\s*proceedings of\b|:\s*proceedings\s*\.?\s*$|\bproceedings\s*\.?\s*$)`)

// notAWork says a candidate's title names front matter or a whole
// proceedings volume, which a search returns beside the papers but no
// report should read or cite (issue 46: ISAAC 2006's and ESA 2002's
// tables of contents were cited).
func notAWork(title string) bool {
	return frontMatter.MatchString(title) || wholeVolume.MatchString(title)
}
