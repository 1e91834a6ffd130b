package pipeline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// Structured data (ARCHITECTURE.md §3, retrieve): records that carry properties in
// search.Record.Data (the Materials Project's computed band gaps, formation
// energies, ...) are facts, not prose. Vector similarity says nothing useful
// about a table of numbers, so their chunks bypass vector filtering: every
// sub-question that found such a record gets its chunks as evidence
// (withStructured, hooked into stageRetrieve), and the writer and reviewer
// see the properties themselves as a data block (structuredBrief, hooked
// into sourcesBrief).

// structuredScore ranks structured evidence first: it was not ranked by
// similarity, and it is exact.
const structuredScore = 1

// structuredKeys are the keys of this run's records with structured data.
func (o *orchestrator) structuredKeys() map[string]bool {
	out := map[string]bool{}
	if o.st.Found == nil {
		return out
	}
	for _, r := range o.st.Found.Records {
		if r.HasData() {
			out[r.Key] = true
		}
	}
	return out
}

// withStructured adds the chunks of the structured-data records a
// sub-question found to its retrieved context, whatever the vector search
// made of them.
func (o *orchestrator) withStructured(got []ContextChunk, keys []string, data map[string]bool) []ContextChunk {
	have := map[string]bool{}
	for _, c := range got {
		have[c.ID] = true
	}
	var extra []ContextChunk
	for _, k := range keys {
		if !data[k] {
			continue
		}
		chunks, err := o.engine.Store.Chunks(k)
		if err != nil {
			continue
		}
		for _, c := range chunks {
			if !have[c.ID] {
				have[c.ID] = true
				extra = append(extra, ContextChunk{ID: c.ID, SourceKey: k, Text: c.Text, Page: c.Page, Score: structuredScore})
			}
		}
	}
	if len(extra) == 0 {
		return got
	}
	return append(extra, got...)
}

// structuredBrief is the "Structured data" block of the writer's brief:
// each record's properties as key = value lines, numbered like the other
// sources when it was analysed (so it can be cited), else marked [data].
func (o *orchestrator) structuredBrief() string {
	data := o.structuredKeys()
	if len(data) == 0 {
		return ""
	}
	num := map[string]int{}
	for i, an := range o.st.Analyses {
		num[an.SourceKey] = i + 1
	}
	var b strings.Builder
	b.WriteString("\nStructured data (computed properties; quote the numbers exactly and cite them like the sources above):\n")
	for _, r := range o.st.Found.Records {
		if !data[r.Key] {
			continue
		}
		label := "[data]"
		if n := num[r.Key]; n > 0 {
			label = fmt.Sprintf("[%d]", n)
		}
		fmt.Fprintf(&b, "%s %s — %s\n", label, r.Title, r.Venue)
		for _, line := range dataLines(r.Data) {
			fmt.Fprintf(&b, "  - %s\n", line)
		}
	}
	return b.String()
}

// dataLines renders a record's properties as sorted "key = value" lines.
func dataLines(d map[string]any) []string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := d[k].(type) {
		case string:
			v = x
		case float64, bool, int:
			v = fmt.Sprint(x)
		default:
			raw, err := json.Marshal(x)
			if err != nil {
				continue
			}
			v = string(raw)
		}
		out = append(out, k+" = "+textkit.Clip(textkit.CleanLine(v), 200))
	}
	return out
}
