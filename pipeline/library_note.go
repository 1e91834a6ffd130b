package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

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
