package textkit

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
		if got := Plausible(s, 2); got != want {
			t.Errorf("Plausible(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestLanguageWords(t *testing.T) {
	if n := LanguageWords("软件测试研究比较了多种技术在真实系统上的效果并报告了发现故障的能力"); n < 15 {
		t.Errorf("a Chinese sentence counts %d words", n)
	}
	if n := LanguageWords(`"]}d} }k wz} sd] x}q`); n != 0 {
		t.Errorf("brace soup counts %d words", n)
	}
	if n := LanguageWords("The sources agree on the main points of testing."); n != 7 {
		t.Errorf("an English sentence counts %d words, want 7", n)
	}
}
