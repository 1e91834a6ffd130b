package search

import "testing"

// Issue 46 #7: a preprint and its journal version, retitled in wording
// only, are one work, whose published version is cited; works of the same
// authors with other titles stay apart.
func TestVersionsRetitledInWordingMerge(t *testing.T) {
	t.Parallel()
	pre := Record{Source: "openalex", OpenAlexID: "W1", Title: "Co-linear Chaining with Overlaps and Gap Costs", Year: 2021,
		Authors: []string{"Chirag Jain", "Daniel Gibney"}, Venue: "bioRxiv", DOI: "10.1101/2021.02.03.429492"}
	pub := Record{Source: "crossref", Title: "Algorithms for Colinear Chaining with Overlaps and Gap Costs", Year: 2022,
		Authors: []string{"Chirag Jain", "Daniel Gibney", "Sharma V. Thankachan"}, Venue: "Journal of Computational Biology", DOI: "10.1089/cmb.2022.0266"}
	other := Record{Source: "crossref", Title: "Chaining with Overlaps Revisited in Practice", Year: 2020,
		Authors: []string{"Chirag Jain"}, Venue: "CPM", DOI: "10.4230/lipics.cpm.2020.25"}
	for _, r := range []*Record{&pre, &pub, &other} {
		AssignKey(r)
	}
	out := Merge([]Record{pre, pub, other})
	if len(out) != 2 {
		t.Fatalf("%d records, want the two versions merged and the other work apart: %+v", len(out), out)
	}
	if out[0].Venue != "Journal of Computational Biology" || out[0].DOI != "10.1089/cmb.2022.0266" {
		t.Errorf("the merged work is not cited as published: %+v", out[0])
	}
}
