package themes

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) < 4 || names[0] != Default {
		t.Fatalf("names %v: want at least four, the default first", names)
	}
	dark, light := 0, 0
	for _, n := range names {
		p, ok := Lookup(n)
		if !ok || p.Name != n {
			t.Errorf("Lookup(%q)", n)
		}
		if p.Dark {
			dark++
		} else {
			light++
		}
		for _, c := range []string{p.Fg, p.FgMuted, p.FgSubtle, p.Bg, p.BgPanel, p.Border, p.Primary, p.Secondary, p.Accent, p.Success, p.Warning, p.Error, p.Info, p.Cost} {
			if len(c) != 7 || c[0] != '#' {
				t.Errorf("%s: colour %q is not #rrggbb", n, c)
			}
		}
	}
	if dark == 0 || light == 0 {
		t.Error("ship dark and light palettes")
	}
	// The cycle visits every theme and comes back.
	seen := map[string]bool{}
	n := Default
	for range names {
		seen[n] = true
		n = Next(n)
	}
	if n != Default || len(seen) != len(names) {
		t.Errorf("cycle: %v", seen)
	}
}

func TestResolve(t *testing.T) {
	if Resolve("auto", true).Name != "dark" || Resolve("auto", false).Name != "light" || Resolve("", false).Name != "light" {
		t.Error("auto follows the background")
	}
	if Resolve("Nord", false).Name != "nord" {
		t.Error("names are case-insensitive and win over the background")
	}
	if Resolve("no-such-theme", false).Name != Default {
		t.Error("unknown names fall back to the default")
	}
}

func TestBuild(t *testing.T) {
	p, _ := Lookup("gruvbox")
	s := Build(p, false)
	if got := s.Markdown.Link.Color; got == nil || *got != p.Accent {
		t.Errorf("glamour link colour %v, want the palette accent %s", got, p.Accent)
	}
	if got := s.Markdown.Document.Color; got == nil || *got != p.Fg {
		t.Error("glamour body colour comes from the palette")
	}
	if out := s.Error.Render("x"); !strings.Contains(out, "\x1b[") {
		t.Errorf("coloured styles emit SGR: %q", out)
	}
	nc := Build(p, true)
	for _, st := range []string{nc.Error.Render("x"), nc.Badge("completed").Render("x"), nc.Text.Render("x"), nc.Cost.Render("x")} {
		if strings.Contains(st, "38;") || strings.Contains(st, "48;") {
			t.Errorf("NO_COLOR output has colour: %q", st)
		}
	}
	if nc.Markdown.Document.Color != nil {
		t.Error("NO_COLOR markdown has no colours")
	}
	if s.Badge("nonsense").Render("x") == "" {
		t.Error("unknown statuses still render")
	}
}
