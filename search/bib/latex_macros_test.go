package bib

import "testing"

// Real titles from a 3,644-entry bibliography and Better BibTeX's suite:
// no word of a title is lost to a macro the decoder does not know.
func TestUnknownAndTextMacrosKeepTheirWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`Introducing {\MP}`:             "Introducing MP",
		`mainframes\dash MVS`:           "mainframes—MVS",
		`CO\textsubscript{x} emissions`: "COₓ emissions",
		`x\textsuperscript{th} order`:   "xth order",
		`at 800--1050 $^\circ$C`:        "at 800–1050 °C",
		`M{\ocirc{u}}ller`:              "Můller",
		`The {\em first} step`:          "The first step",
		`A \foo{bar} baz`:               "A bar baz",
		`{\bf Bold} and \relax plain`:   "Bold and plain",
		`Using \BibTeXstyle\ files`:     "Using BibTeXstyle files",
	} {
		if got := decodeTeX(in); got != want {
			t.Errorf("decodeTeX(%q) = %q, want %q", in, got, want)
		}
	}
}

// Text inside math is text: \textrm{\textmu m} is "µm", its control word
// eating the space after it as TeX does.
func TestTextInsideMath(t *testing.T) {
	t.Parallel()
	eq(t, "micrometres", decodeTeX(`$0.72\,\textrm{\textmu m}$`), "0.72 µm")
}
