package ui

import (
	"slices"

	"github.com/researchtui/researchtui/pipeline/runopts"
)

// Settings are what the TUI remembers between sessions: the theme chosen
// with t and the last choice of the new-research form. The command line
// (ui/cli) keeps them in a state file of its own; empty parts are left as
// they are.
type Settings struct {
	Theme string
	Form  FormChoice // nil: unchanged
}

// FormChoice is the new-research form's last choice of each option the
// table marks Remember (runopts.RunOptions), by the option's Key, as
// the option's Go value (an empty source list: the planner picks them by
// the question's topic).
type FormChoice map[string]any

// RememberedChoice is what the form chose in opt, of the options the TUI
// remembers.
func RememberedChoice(opt runopts.Options) FormChoice {
	c := FormChoice{}
	for _, spec := range runopts.RunOptions {
		if !spec.Remember {
			continue
		}
		v := spec.Get(&opt)
		if l, ok := v.([]string); ok {
			v = slices.Clone(l)
			if v.([]string) == nil {
				v = []string{}
			}
		}
		c[spec.Key] = v
	}
	return c
}

// Apply sets the remembered choices on o, over what o had: a string left
// empty where empty means "the default below" (KeepIfEmpty) leaves o's,
// any other value (an empty source list too: by topic) replaces it. A
// value of the wrong type is skipped.
func (c FormChoice) Apply(o *runopts.Options) {
	for _, spec := range runopts.RunOptions {
		v, ok := c[spec.Key]
		if !spec.Remember || !ok || !runopts.OptionValueFits(spec.Type, v) {
			continue
		}
		if s, isString := v.(string); isString && s == "" && spec.KeepIfEmpty {
			continue
		}
		spec.Set(o, v)
	}
}
