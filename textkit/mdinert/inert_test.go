package mdinert

import "testing"

// hostile are the audit's cases (issue 48) and their kin: each carries an
// image, a link or raw HTML that line toggles let through.
var hostile = []string{
	"```x```\n![p](http://host/p.png)\n<img src=http://host/i.png>",
	"    ```\n![p](http://host/p.png)\n\n<img src=x>",
	"# Title\n\nA claim [1]. See ![t](http://h/t.png) and [x](https://evil) <img src=x onerror=y> <https://auto>.\n\n[r]: https://evil\n\n[r] and [x][r]\n",
	"<pre>\n```\n</pre>\n\n```\n![x](http://evil/a.png)\n```\n",
	"<div>\n\n```\n</div>\n```\n![y](http://evil/b.png)\n",
	"> ![q](http://evil/q.png)\n> - [l](http://evil)\n",
	"| a | b |\n|---|---|\n| `x` | ![c](http://evil/c.png) |\n",
	"~~~\ncode\n~~~~\n<script>alert(1)</script>\n~~~\n[z](http://evil)",
	"``` a ` b\n![w](http://evil)\n```",
	"text <!-- c --> <?php ?> <![CDATA[x]]> </p>",
	"[a]:\n  http://evil\n\n[a]",
	"\\![not](an/image) \\<b> and \\\\![yes](http://evil/y.png)",
}

// TestProseLeavesNothingActive: whatever the Markdown, what Prose gives
// back shows no image, link or raw HTML to a CommonMark reader; code stays
// as written; a second pass changes nothing.
func TestProseLeavesNothingActive(t *testing.T) {
	t.Parallel()
	for _, in := range hostile {
		if len(Active(in)) == 0 {
			t.Errorf("test case has nothing active, it tests nothing: %q", in)
		}
		out := Prose(in)
		if got := Active(out); len(got) > 0 {
			t.Errorf("Prose(%q) = %q: still %v", in, out, got)
		}
		if again := Prose(out); again != out {
			t.Errorf("a second pass changed %q to %q", out, again)
		}
	}
}

// TestProseKeepsMarkdownAndCode: the writer's own Markdown and its code
// are untouched.
func TestProseKeepsMarkdownAndCode(t *testing.T) {
	t.Parallel()
	in := "# Findings\n\n- **Bold** and *it* claim [1], [2][3].\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nInline `<b>![as](is)</b>` code.\n\n```go\nif a < b && c[0](x) {}\n```\n\n    indented <img> ![i](j)\n"
	if out := Prose(in); out != in {
		t.Errorf("Markdown without anything active was changed:\n%s\n---\n%s", in, out)
	}
}

// FuzzProse: no input leaves anything active, and a second pass changes
// nothing. Seeded with the hostile cases.
func FuzzProse(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Prose(in)
		if got := Active(out); len(got) > 0 {
			t.Fatalf("Prose(%q) = %q: still %v", in, out, got)
		}
		if again := Prose(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}
