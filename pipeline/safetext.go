package pipeline

import "github.com/researchtui/researchtui/search"

// SafeText is the one rule for untrusted text (model output, API fields,
// web pages, PDFs) on its way to a terminal or a file a terminal may show:
// escape sequences (CSI, OSC, DCS… in 7- and 8-bit forms), C0/C1 controls
// but \n and \t, DEL, bidi controls, BOMs and invalid UTF-8 go. It is
// search's StripControls, re-exported for the faces that do not import
// search (the TUI).
func SafeText(s string) string { return search.StripControls(s) }

// SafeLine is SafeText for one-line fields: whitespace runs, line breaks
// included, become one space.
func SafeLine(s string) string { return search.CleanLine(s) }
