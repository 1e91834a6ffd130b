package bib

import "testing"

// Issue 46's recorded abstracts: math reads as Unicode, or stays whole as
// code; money is not math.
func TestMathText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`runs in $\mathcal{O}(n^{2})$ time, which is optimal`: "runs in O(n²) time, which is optimal",
		`an $\tilde{O}(\sqrt{nk})$ algorithm`:                 "an Õ(√(nk)) algorithm",
		`for every $\epsilon > 0$ and $k \leq n$`:             "for every ε > 0 and k ≤ n",
		`the sequence $x_i$ and $x_{ij}$`:                     "the sequence xᵢ and xᵢⱼ",
		`a $O}\left(n^{2}\right)$ fragment`:                   "a O(n²) fragment",
		`costs $5 and $10 a month`:                            "costs $5 and $10 a month",
		`exponent $x^{ab}$ kept`:                              "exponent `$x^{ab}$` kept",
		`inline \(\alpha + \beta\) too`:                       "inline α + β too",
		`no math at all`:                                      "no math at all",
		`an unclosed $x`:                                      "an unclosed $x",
		`$$\sum_{i=1}^{n} i$$ displayed`:                      "∑ᵢ₌₁ⁿ i displayed",
	} {
		if got := MathText(in); got != want {
			t.Errorf("MathText(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
