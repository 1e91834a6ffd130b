package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// Run options added to runopts.RunOptions (here by the test) with a Form
// label are rows of the new-research form, and what is chosen there
// reaches the run, without a change to the form's code (issue 37, point 1).
func TestTableAddedOptionsAreFormRows(t *testing.T) {
	var tone, audience string
	var terse bool
	old := runopts.RunOptions
	t.Cleanup(func() { runopts.RunOptions = old })
	runopts.RunOptions = append(old[:len(old):len(old)],
		runopts.OptionSpec{Name: "tone", Type: runopts.OptionString, Default: "plain", Choices: []string{"plain", "formal"},
			Form: "Tone", FormChoices: []string{"plain words", "formal prose"},
			Access: runopts.Access{Get: func(*runopts.Options) any { return tone }, Set: func(_ *runopts.Options, v any) { tone = v.(string) }}},
		runopts.OptionSpec{Name: "terse", Type: runopts.OptionBool, Form: "Terse",
			Access: runopts.Access{Get: func(*runopts.Options) any { return terse }, Set: func(_ *runopts.Options, v any) { terse = v.(bool) }}},
		runopts.OptionSpec{Name: "audience", Type: runopts.OptionString, Form: "Audience", Placeholder: "anyone",
			Access: runopts.Access{Get: func(*runopts.Options) any { return audience }, Set: func(_ *runopts.Options, v any) { audience = v.(string) }}},
	)
	m, svc := newTestModel(t, 120, 40, "dark", false)
	typeText(t, m, "Is it")
	press(t, m, "ctrl+o")
	d, ok := m.dialog.(*newRunDialog)
	if !ok {
		t.Fatalf("no form: %T", m.dialog)
	}
	out := ansi.Strip(m.render())
	for _, want := range []string{"Tone", "plain words", "formal prose", "Terse", "Audience", "anyone", "Language", "Library"} {
		if !strings.Contains(out, want) {
			t.Errorf("the form does not show %q:\n%s", want, out)
		}
	}
	for d.focus != d.rowOf("tone") {
		press(t, m, "tab")
	}
	press(t, m, "l", "tab", "space", "tab")
	typeText(t, m, "children")
	press(t, m, "enter")
	if len(svc.started) != 1 {
		t.Fatalf("started %d", len(svc.started))
	}
	if tone != "formal" || !terse || audience != "children" {
		t.Errorf("the form gave tone %q, terse %v, audience %q", tone, terse, audience)
	}
}
