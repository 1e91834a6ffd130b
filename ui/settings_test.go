package ui

import (
	"reflect"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline/runopts"
)

// What the form chose comes back whole on the next form's options; an
// empty model leaves the config's, a value of the wrong type (a
// hand-edited state file) is skipped rather than panicking.
func TestTheFormsChoiceAppliesOverTheDefaults(t *testing.T) {
	chose := runopts.Options{Model: "llama3.1:8b", Depth: "deep", Kind: "review", ReviewPlan: "ask", Language: "de", Sources: []string{"pubmed"}}
	c := RememberedChoice(chose)
	if len(c) != 6 {
		t.Errorf("remembered %v, want the six options the table marks", c)
	}
	next := runopts.Options{Model: "qwen3:8b", Depth: "quick", Verify: "off"}
	c.Apply(&next)
	if next.Model != chose.Model || next.Depth != chose.Depth || next.Kind != chose.Kind || next.ReviewPlan != chose.ReviewPlan ||
		next.Language != chose.Language || !reflect.DeepEqual(next.Sources, chose.Sources) || next.Verify != "off" {
		t.Errorf("applied: %+v", next)
	}
	next = runopts.Options{Model: "qwen3:8b"}
	FormChoice{"model": "", "depth": 3, "sources": "arxiv"}.Apply(&next)
	if next.Model != "qwen3:8b" || next.Depth != "" || next.Sources != nil {
		t.Errorf("empty and mistyped choices applied: %+v", next)
	}
}

// What the command line could not use of what the TUI remembered is said
// on the first screen, where the person looks, not on a stderr the
// alternate screen hides.
func TestAStartNoticeIsShown(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", true, func(c *Config) {
		c.Notice = "the remembered theme and form choices are not used: tui-state.json cannot be read"
	})
	if v := m.View().Content; !strings.Contains(v, "the remembered theme and form") {
		t.Errorf("the notice is not on the first screen:\n%s", v)
	}
}
