package search

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunk is a piece of a document for embedding and retrieval. Start and End
// are byte offsets of Text in the chunked string (the page's text for
// ChunkPages); Page is 1-based, 0 when unknown. References is true for a
// chunk of a paper's reference list (see ReferencesStart): its titles match
// many queries without saying anything, so retrieval down-weights it.
type Chunk struct {
	Index      int
	Text       string
	Page       int
	Start      int
	End        int
	References bool
}

// ChunkOptions size chunks in estimated tokens (see EstimateTokens).
type ChunkOptions struct {
	TargetTokens  int // default 500
	OverlapTokens int // default 50; negative: no overlap
}

func (o ChunkOptions) withDefaults() ChunkOptions {
	if o.TargetTokens <= 0 {
		o.TargetTokens = 500
	}
	if o.OverlapTokens == 0 {
		o.OverlapTokens = 50
	}
	if o.OverlapTokens < 0 {
		o.OverlapTokens = 0
	}
	if o.OverlapTokens >= o.TargetTokens {
		o.OverlapTokens = o.TargetTokens / 2
	}
	return o
}

// EstimateTokens estimates the tokens of s as words × 1.3 (rounded up), or
// runes / 6 when that is larger (long unbroken strings, CJK text).
func EstimateTokens(s string) int {
	words := len(strings.Fields(s))
	est := int(math.Ceil(float64(words) * 1.3))
	if r := utf8.RuneCountInString(s) / 6; r > est {
		est = r
	}
	return est
}

type span struct{ start, end, tokens int }

// ChunkText splits text into sentence-aligned chunks of about TargetTokens,
// consecutive chunks sharing whole sentences worth about OverlapTokens.
// Sentences longer than TargetTokens are split at word boundaries.
func ChunkText(text string, opt ChunkOptions) []Chunk {
	opt = opt.withDefaults()
	var sents []span
	for _, s := range sentences(text) {
		s.tokens = EstimateTokens(text[s.start:s.end])
		if s.tokens > opt.TargetTokens {
			sents = append(sents, splitWords(text, s, opt.TargetTokens)...)
		} else {
			sents = append(sents, s)
		}
	}
	var chunks []Chunk
	i := 0
	for i < len(sents) {
		j, tokens := i, 0
		for j < len(sents) && (j == i || tokens+sents[j].tokens <= opt.TargetTokens) {
			tokens += sents[j].tokens
			j++
		}
		start, end := sents[i].start, sents[j-1].end
		chunks = append(chunks, Chunk{Index: len(chunks), Text: text[start:end], Start: start, End: end})
		if j >= len(sents) {
			break
		}
		// next chunk starts with the last whole sentences of this one that fit
		// in the overlap, but always moves forward
		next, ov := j, 0
		for next-1 > i && ov+sents[next-1].tokens <= opt.OverlapTokens {
			ov += sents[next-1].tokens
			next--
		}
		i = next
	}
	return chunks
}

// ChunkPages chunks each page on its own (chunks never span pages) and sets
// Page to the 1-based page number; Index runs across all pages. When the
// pages hold a reference list (ReferencesStart), no chunk spans its start
// or its end (an appendix after it), and its chunks are marked References.
func ChunkPages(pages []string, opt ChunkOptions) []Chunk {
	type pos struct{ page, off int }
	start, end := pos{len(pages), 0}, pos{len(pages), 0}
	if p, off, ok := ReferencesStart(pages); ok {
		start = pos{p, off}
		end.page, end.off = referencesEnd(pages, p, off)
	}
	var out []Chunk
	add := func(page, from, to int, refs bool) {
		if from >= to {
			return
		}
		for _, c := range ChunkText(pages[page][from:to], opt) {
			c.Page = page + 1
			c.Index = len(out)
			c.Start += from
			c.End += from
			c.References = refs
			out = append(out, c)
		}
	}
	for p, text := range pages {
		// is the top of page p inside the reference list?
		afterStart := p > start.page || (p == start.page && start.off == 0)
		beforeEnd := p < end.page || (p == end.page && end.off > 0)
		from, inRefs := 0, afterStart && beforeEnd
		// cut the page where the list starts or ends on it
		for _, cut := range []pos{start, end} {
			if cut.page == p && cut.off > 0 {
				add(p, from, cut.off, inRefs)
				from, inRefs = cut.off, cut == start
			}
		}
		add(p, from, len(text), inRefs)
	}
	return out
}

// splitWords hard-splits an over-long sentence into pieces of at most
// target tokens at word boundaries.
func splitWords(text string, s span, target int) []span {
	maxWords := max(1, int(float64(target)/1.3))
	var out []span
	pos, words := s.start, 0
	pieceStart := -1
	i := s.start
	for i < s.end {
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		// start of a word
		if pieceStart < 0 {
			pieceStart = i
		}
		j := i
		for j < s.end {
			r, size := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		// a single giant "word": cut it by runes
		if EstimateTokens(text[i:j]) > target {
			if pieceStart < i {
				out = append(out, span{pieceStart, pos, 0})
			}
			out = append(out, cutRunes(text, i, j, target*4)...)
			pieceStart, words = -1, 0
			pos, i = j, j
			continue
		}
		words++
		pos = j
		i = j
		if words >= maxWords {
			out = append(out, span{pieceStart, pos, 0})
			pieceStart, words = -1, 0
		}
	}
	if pieceStart >= 0 {
		out = append(out, span{pieceStart, pos, 0})
	}
	for k := range out {
		out[k].tokens = EstimateTokens(text[out[k].start:out[k].end])
	}
	return out
}

func cutRunes(text string, start, end, maxRunes int) []span {
	var out []span
	n, from := 0, start
	for i := range text[start:end] {
		if n == maxRunes {
			out = append(out, span{from, start + i, 0})
			from, n = start+i, 0
		}
		n++
	}
	if from < end {
		out = append(out, span{from, end, 0})
	}
	return out
}

// abbreviations that end with a period but do not end a sentence
// (lower-cased, without the final period).
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "al": true, "fig": true, "figs": true, "eq": true, "eqs": true,
	"ref": true, "refs": true, "sec": true, "secs": true, "ch": true, "vol": true, "no": true,
	"pp": true, "p": true, "cf": true, "vs": true, "approx": true, "dr": true, "mr": true, "mrs": true,
	"ms": true, "prof": true, "st": true, "tab": true, "viz": true, "resp": true, "ca": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true, "inc": true, "ltd": true,
	"jr": true, "sr": true, "etc": false, "u.s": true, "thm": true, "def": true, "prop": true,
}

// sentences returns the byte spans of the sentences of text (trimmed of
// surrounding whitespace). A sentence ends at . ! or ? (plus closing quotes
// or brackets) followed by whitespace and an upper-case letter, digit or
// opening quote/bracket, or by a line break; and at blank lines. Periods of
// abbreviations (e.g., et al., Fig.), initials and decimals do not end one.
func sentences(text string) []span {
	var out []span
	start := -1
	emit := func(end int) {
		if start < 0 {
			return
		}
		s := strings.TrimRightFunc(text[start:end], unicode.IsSpace)
		if s != "" {
			out = append(out, span{start: start, end: start + len(s)})
		}
		start = -1
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if start < 0 {
			if !unicode.IsSpace(r) {
				start = i
			} else {
				i += size
				continue
			}
		}
		switch {
		case r == '\n':
			// blank line: paragraph break
			j := i + 1
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
				j++
			}
			if j < len(text) && text[j] == '\n' {
				emit(i)
			}
		case r == '.' || r == '!' || r == '?':
			j := i + size
			for j < len(text) && strings.ContainsRune(`"')]”’»`, rune(text[j])) {
				j++
			}
			if j >= len(text) {
				break
			}
			nr, _ := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsSpace(nr) {
				break // decimals, URLs, "e.g" inside
			}
			newline := false
			k := j
			for k < len(text) {
				c, cs := utf8.DecodeRuneInString(text[k:])
				if !unicode.IsSpace(c) {
					break
				}
				if c == '\n' {
					newline = true
				}
				k += cs
			}
			if k >= len(text) {
				break
			}
			next, _ := utf8.DecodeRuneInString(text[k:])
			if !newline && !(unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune(`"'([“‘`, next)) {
				break
			}
			if r == '.' && isAbbreviation(text[start:i]) {
				break
			}
			emit(j)
			i = j
			continue
		}
		i += size
	}
	emit(len(text))
	return out
}

// isAbbreviation reports whether the word just before a period is an
// abbreviation or an initial.
func isAbbreviation(before string) bool {
	k := strings.LastIndexFunc(before, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == '[' })
	w := before[k+1:]
	if w == "" {
		return false
	}
	lw := strings.ToLower(w)
	if abbreviations[lw] {
		return true
	}
	// single capital initial: "J. Smith", "M. Murray"
	if r, n := utf8.DecodeRuneInString(w); n == len(w) && unicode.IsUpper(r) {
		return true
	}
	return false
}

// Sentences splits text into its sentences, by the rules chunking uses
// (abbreviations, initials and decimals do not end one).
func Sentences(text string) []string {
	spans := sentences(text)
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = text[s.start:s.end]
	}
	return out
}
