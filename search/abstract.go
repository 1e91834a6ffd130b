package search

import (
	"regexp"
	"strings"
)

// Abstracts as the scholarly APIs give them carry text that is not the
// work's: a section label heading the abstract ("Abstract In 1950, …",
// "Significance As AI interacts …", PNAS's and Springer's layout) and
// publisher notes ("This article is part of the theme issue '…'.", a
// copyright line). Quoted as a finding, a label reads as part of the
// sentence and a note as evidence; CleanAbstract takes both out where a
// record is made.

// abstractLabel is a section label at the start of an abstract, followed
// by the capital that starts its first sentence.
var abstractLabel = regexp.MustCompile(`^(?i:abstract|background|significance|summary|objectives?|purpose|context|introduction|aims?)\s*[:.\-–—]?\s+(\p{Lu}|\d)`)

// abstractNotes are publisher sentences that are no part of an abstract.
var abstractNotes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\s*This (?:article|paper) is part of (?:the|a) (?:theme|discussion meeting|special) issue[^.]*\.`),
	regexp.MustCompile(`\s*(?:©|\(c\)|Copyright ©?)\s*\d{4}[^.]*\.`),
	regexp.MustCompile(`(?i)\s*All rights reserved\.`),
	regexp.MustCompile(`(?i)\s*This is an open access article[^.]*\.`),
}

// publishedBy is a closing "Published by Elsevier B.V." sentence (a
// sentence of its own, with a capital: "were published by the WHO" stays).
var publishedBy = regexp.MustCompile(`(^|[.!?])\s*Published by [^\n]{1,120}$`)

// CleanAbstract is an abstract without its heading label and publisher
// notes (see above); everything else is kept as given.
func CleanAbstract(s string) string {
	if len(s) > 4*maxAbstractRunes {
		// No abstract is this long: cut before the patterns run over
		// megabytes (BoundFields then cuts it to its cap).
		s = clipRunes(s, 4*maxAbstractRunes)
	}
	s = strings.TrimSpace(s)
	for range 2 { // "Abstract Background: …"
		if m := abstractLabel.FindStringSubmatchIndex(s); m != nil {
			s = s[m[2]:]
		}
	}
	for _, re := range abstractNotes {
		s = re.ReplaceAllString(s, "")
	}
	s = publishedBy.ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}
