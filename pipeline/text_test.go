package pipeline

import "testing"

func TestPlausible(t *testing.T) {
	for s, want := range map[string]bool{
		"How do transformers handle long context?": true,
		"software testing":                         true,
		"CRISPR-Cas9 off-target (2019)":            true,
		`"]}d}`:                                    false,
		"}k wz} sd]":                               false,
		"":                                         false,
		"a b c":                                    false,
		"如何研究软件测试":                                 true,
		"ソフトウェアテスト":                                true,
	} {
		if got := plausible(s, 2); got != want {
			t.Errorf("plausible(%q) = %v, want %v", s, got, want)
		}
	}
}
