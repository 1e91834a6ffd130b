package pipeline

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/search"
)

// TestShortlistOrdersAndDropsOnlyTheUnrelated: the shortlist takes every
// readable candidate above the low floor, best first, up to its limit;
// what shares no word with the query and is far less similar than the
// best is passed over unseen, and so is a title alone.
func TestShortlistOrdersAndDropsOnlyTheUnrelated(t *testing.T) {
	text := search.Record{Abstract: "an abstract"}
	recs := map[string]search.Record{"a": text, "b": text, "c": text, "d": text, "e": {}, "f": text}
	cands := []Candidate{
		{Key: "b", Score: 0.2, Relevance: 0.2, Coverage: 0.3, Semantic: 0.3},
		{Key: "a", Score: 0.9, Relevance: 0.5, Coverage: 0.8, Semantic: 0.6},
		{Key: "c", Score: 0.1, Relevance: 0.1, Coverage: 0, Semantic: 0.1},    // no query word, far below
		{Key: "d", Score: 0.1, Relevance: 0.05, Coverage: 0.2, Semantic: 0.1}, // under the low floor
		{Key: "e", Score: 0.8, Relevance: 0.5, Coverage: 0.8, Semantic: 0.6},  // a title alone
		{Key: "f", Score: 0.15, Relevance: 0.15, Coverage: 0, Semantic: 0.5},  // no query word, but similar
	}
	idx := shortlist(cands, recs, 10)
	var got []string
	for _, i := range idx {
		got = append(got, cands[i].Key)
	}
	if strings.Join(got, "") != "abf" {
		t.Errorf("shortlisted %q; want a, b, f (best first)", got)
	}
	why := map[string]string{}
	for _, c := range cands {
		why[c.Key] = c.Reason
	}
	if why["c"] != reasonUnrelated || why["e"] != reasonNoText || !strings.HasPrefix(why["d"], reasonBelowFloor) {
		t.Errorf("reasons %q", why)
	}
	if idx := shortlist(cands, recs, 2); len(idx) != 2 || cands[idx[1]].Key != "b" {
		t.Errorf("a limit of 2 shortlisted %v", idx)
	}
}

// TestChooseByVerdictReadsOnTopicBestFirst: on-topic candidates are read
// best ranked first up to the quota, one another sub-question reads
// counts without a place, the rest wait for the fill; off-topic and
// unjudged ones are not read.
func TestChooseByVerdictReadsOnTopicBestFirst(t *testing.T) {
	cands := []Candidate{
		{Key: "a", Screen: screenOnTopic},
		{Key: "b", Screen: screenOffTopic + "GPU hardware"},
		{Key: "c", Screen: screenOnTopic},
		{Key: "d", Screen: screenOnTopic},
		{Key: "e", Screen: ""},
		{Key: "f", Screen: screenOnTopic},
	}
	chooseByVerdict(cands, []int{0, 1, 2, 3, 4, 5}, 2, func(k string) bool { return k == "c" })
	want := map[string]string{"a": reasonRead, "b": reasonOffTopic + " (GPU hardware)", "c": reasonDuplicate, "d": reasonRead, "e": reasonUnjudged, "f": reasonQuota}
	for _, c := range cands {
		if c.Reason != want[c.Key] || c.Read != (c.Key == "a" || c.Key == "c" || c.Key == "d") {
			t.Errorf("%s: read %v, %q; want %q", c.Key, c.Read, c.Reason, want[c.Key])
		}
	}
}

// TestScreenFallback: a screen that answered nothing usable, or judged
// every one of many candidates on topic though the words separate them,
// cannot judge; one that rejected something, or judged a pool the words
// also find close, can; once blind, a run stays blind.
func TestScreenFallback(t *testing.T) {
	many := func(apart int) []Candidate {
		var cs []Candidate
		for i := range 10 {
			c := Candidate{Score: 1, Relevance: 0.5}
			if i < apart {
				c.Score, c.Relevance = 0.1, 0.1
			}
			cs = append(cs, c)
		}
		return cs
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, c := range []struct {
		name  string
		u     *screenUnit
		cands []Candidate
		blind bool
		falls bool
	}{
		{"off", nil, many(5), false, false},
		{"junk", &screenUnit{Unjudged: 10}, many(0), false, true},
		{"all on topic, the words separate", &screenUnit{OnTopic: 10, Screened: 10}, many(5), false, true},
		{"all on topic, the words agree", &screenUnit{OnTopic: 10, Screened: 10}, many(1), false, false},
		{"a rejection", &screenUnit{OnTopic: 9, Rejected: 1, Screened: 10}, many(5), false, false},
		{"few, all on topic, blind run", &screenUnit{OnTopic: 3, Screened: 3}, many(0)[:3], true, true},
		{"few, all on topic", &screenUnit{OnTopic: 3, Screened: 3}, many(3)[:3], false, false},
	} {
		idx := all[:len(c.cands)]
		if got := screenFallback(c.u, c.cands, idx, 0.3, c.blind); (got != "") != c.falls {
			t.Errorf("%s: fallback %q, want one: %v", c.name, got, c.falls)
		}
	}
}
