package bib

import (
	"strings"
	"testing"
)

func TestDecodeTeX(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		// accents in all their spellings
		{`{\"o}`, "ö"}, {`\"{o}`, "ö"}, {`\"o`, "ö"}, {`{\"{o}}`, "ö"}, {`\"O`, "Ö"},
		{`\'e`, "é"}, {"\\`a", "à"}, {`\^o`, "ô"}, {`\~n`, "ñ"}, {`\=a`, "ā"}, {`\.z`, "ż"},
		{`\c{c}`, "ç"}, {`\c c`, "ç"}, {`{\c{S}}`, "Ş"}, {`\v{s}`, "š"}, {`\v C`, "Č"}, {`\u{g}`, "ğ"},
		{`\H{o}`, "ő"}, {`\k{a}`, "ą"}, {`\r{a}`, "å"}, {`\d{s}`, "ṣ"}, {`\v{q}`, "q\u030c"},
		{`{\'\i}`, "í"}, {`\'{\i}`, "í"}, {`\"\i`, "ï"}, {`\^{\j}`, "ĵ"},
		// letters
		{`\aa`, "å"}, {`{\AA}`, "Å"}, {`\o`, "ø"}, {`{\O}`, "Ø"}, {`\ss{}`, "ß"}, {`Stra\ss e`, "Straße"},
		{`\ae`, "æ"}, {`\oe`, "œ"}, {`\l`, "ł"}, {`{\L}`, "Ł"}, {`\i`, "ı"}, {`\j`, "ȷ"},
		// dashes, spaces, quotes
		{"1--10", "1–10"}, {"a---b", "a—b"}, {"well-known", "well-known"}, {"a~b", "a b"},
		{"``quoted''", "“quoted”"}, {"`single'", "‘single'"},
		// escapes
		{`\& \% \$ \# \_ \{ \}`, "& % $ # _ { }"}, {`AT{\&}T`, "AT&T"},
		// protective braces and formatting
		{"{DNA} of {{E. coli}}", "DNA of E. coli"}, {`\textit{x} \emph{y} \textbf{z}`, "x y z"},
		{`{\em emphasised} text`, "emphasised text"}, {`\mkbibemph{The Concept}`, "The Concept"},
		{`\textsc{Unesco}`, "Unesco"}, {`\enquote{q}`, "“q”"}, {`\href{http://x.org}{the text}`, "the text"},
		{`\url{http://a.org/~x_y}`, "http://a.org/~x_y"}, {`an \unknown{argument}`, "an argument"},
		{`\textendash{} \textemdash{} \textregistered`, "– — ®"}, {`\LaTeX{} and \TeX`, "LaTeX and TeX"},
		{`x\\y`, "x y"}, {`\noopsort{a}Zeta`, "Zeta"},
		// math
		{`$\alpha$`, "α"}, {`$\beta$-sheet`, "β-sheet"}, {`$\Omega$`, "Ω"}, {`$\Delta$G`, "ΔG"},
		{`H$_2$O`, "H₂O"}, {`10$^{-3}$`, "10⁻³"}, {`$x^{ab}$`, "xab"}, {`$\mathrm{CO}_2$`, "CO₂"},
		{`$a \times b \leq c$`, "a × b ≤ c"}, {`$x$`, "x"}, {`$\bar{1}$`, "1\u0304"}, {`$\frac{1}{2}$`, "1/2"},
		{`$\unknownmacro{z}$`, "z"}, {`100 $\mu$m`, "100 μm"}, {`17$\alpha$-3A4`, "17α-3A4"},
		// broken input decodes without complaint
		{`{unclosed`, "unclosed"}, {`closed}}`, "closed"}, {`\`, ""}, {`\'`, "´"}, {`$unclosed math`, "unclosed math"},
		{"plain text", "plain text"}, {"Καρυωτάκης", "Καρυωτάκης"},
	} {
		if got := decodeTeX(c.in); got != c.want {
			t.Errorf("decodeTeX(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDecodeVerbatim(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`https://www.sciencedirect.com/a?via{\%}3Dihub`: "https://www.sciencedirect.com/a?via%3Dihub",
		`10.1000/a{\_}b`:      "10.1000/a_b",
		`http://a.org/\~{}me`: "http://a.org/~me",
		`C$\backslash$:/x`:    `C\:/x`,
		`http://a.org/~me`:    "http://a.org/~me",
	} {
		if got := decodeVerbatim(in); got != want {
			t.Errorf("decodeVerbatim(%q) = %q, want %q", in, got, want)
		}
	}
}

// Nesting deeper than maxDepth is read without recursion, so a hostile
// value cannot exhaust the stack.
func TestDecodeTeXDeepNesting(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("{", 200_000) + "x" + strings.Repeat("}", 200_000)
	if got := decodeTeX(deep); got != "x" {
		t.Errorf("deep braces = %q", got)
	}
	accents := strings.Repeat(`\'`, 200_000) + "e"
	if got := decodeTeX(accents); !strings.Contains(got, "é") {
		t.Errorf("deep accents lost the letter: %.40q", got)
	}
	args := strings.Repeat(`\textit{`, 200_000) + "y" + strings.Repeat("}", 200_000)
	if got := decodeTeX(args); got != "y" {
		t.Errorf("deep arguments = %.40q", got)
	}
}
