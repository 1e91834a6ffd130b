package textkit

import "testing"

func TestCleanText(t *testing.T) {
	cases := map[string]string{
		"a\x1b]0;pwned\x07b":          "ab",
		"red \x1b[1;31mtext\x1b[0m":   "red text",
		"x\x1b]8;;http://e\x1b\\link": "xlink",
		"tab\there  spaces":           "tab here spaces",
		"c1 \u009b2Jcsi":              "c1 csi",
		"bell\x07 nul\x00 del\x7f":    "bell nul del",
		"para\r\n\r\n\r\n\nnext":      "para\n\nnext",
		"rtl \u202egnp.exe":           "rtl gnp.exe",
		"bad utf8 \xff\xfe end":       "bad utf8 end",
	}
	for in, want := range cases {
		if got := CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := CleanLine("a\n\nb\t c"); got != "a b c" {
		t.Errorf("CleanLine: %q", got)
	}
}

func TestStripControls(t *testing.T) {
	cases := map[string]string{
		"  indented\n\tcode":     "  indented\n\tcode",
		"crlf\r\nline\rend":      "crlf\nline\nend",
		"\xff\x9b31mx":           "x", // a lone 0x9b byte is the 8-bit CSI it encodes
		"bom\ufeff rlm\u200f ok": "bom rlm ok",
	}
	for in, want := range cases {
		if got := StripControls(in); got != want {
			t.Errorf("StripControls(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClipPluralFirstNonEmpty(t *testing.T) {
	if got := Clip("héllo wörld", 5); got != "héll…" {
		t.Errorf("Clip: %q", got)
	}
	if got := Clip("short", 5); got != "short" {
		t.Errorf("Clip kept: %q", got)
	}
	for n, want := range map[int]string{0: "0 chunks", 1: "1 chunk", 3: "3 chunks"} {
		if got := Plural(n, "chunk", "chunks"); got != want {
			t.Errorf("Plural(%d) = %q", n, got)
		}
	}
	if got := FirstNonEmpty("", "", "b", "c"); got != "b" {
		t.Errorf("FirstNonEmpty: %q", got)
	}
	if got := FirstNonEmpty(); got != "" {
		t.Errorf("FirstNonEmpty(): %q", got)
	}
}

func FuzzStripControls(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\x9b31mx", "a\x1b]0;t\x07b", "\x1b[1\nm", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range StripControls(s) {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r == 0xfeff {
				t.Fatalf("%q kept %U", s, r)
			}
		}
	})
}

// A long question made a title is cut after a whole word (a trial saw
// "…flüchtige Tests? Pr").
func TestClipWords(t *testing.T) {
	for in, want := range map[string]string{
		"Prüfung über flüchtige Tests? Prüfen wir es": "Prüfung über flüchtige Tests?…",
		"short enough": "short enough",
		"Donaudampfschifffahrtsgesellschaftskapitän ist": "Donaudampfschifffahrtsgesellschaft…",
	} {
		if got := ClipWords(in, 35); got != want {
			t.Errorf("ClipWords(%q, 35) = %q, want %q", in, got, want)
		}
	}
}
