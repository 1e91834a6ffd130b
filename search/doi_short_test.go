package search

import "testing"

// A short DOI from a library ("10/fqd6hj", as Better BibTeX and doi.org
// write them) is kept: doi.org resolves it, and dropping it loses the
// only link a reference has.
func TestShortDOIsAreKept(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"10/fqd6hj":                 "10/fqd6hj",
		"https://doi.org/10/FQD6HJ": "10/fqd6hj",
		"10/":                       "",
		"10.1000/XYZ":               "10.1000/xyz",
		"not a doi":                 "",
	} {
		if got := NormalizeDOI(in); got != want {
			t.Errorf("NormalizeDOI(%q) = %q, want %q", in, got, want)
		}
	}
}
