package search

import "github.com/researchtui/researchtui/textkit"

// Transitional: the text rules moved to textkit; these go once the files
// still naming them here are moved over.
var (
	CleanText     = textkit.CleanText
	CleanLine     = textkit.CleanLine
	StripControls = textkit.StripControls
	Plural        = textkit.Plural
)
