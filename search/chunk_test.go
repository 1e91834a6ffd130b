package search

import (
	"fmt"
	"strings"
	"testing"
)

func TestSentences(t *testing.T) {
	t.Parallel()
	text := "We follow Smith et al. in this. See Fig. 2 for e.g. the value 3.14 of pi! Is it J. Doe? Yes.\nNew line starts here. lower case after period. continues"
	var got []string
	for _, s := range sentences(text) {
		got = append(got, text[s.start:s.end])
	}
	want := []string{
		"We follow Smith et al. in this.",
		"See Fig. 2 for e.g. the value 3.14 of pi!",
		"Is it J. Doe?",
		"Yes.",
		"New line starts here. lower case after period. continues",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestChunkTextSizesAndOverlap(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "Sentence number %d has exactly eight words here. ", i)
	}
	text := b.String()
	opt := ChunkOptions{TargetTokens: 100, OverlapTokens: 25}
	chunks := ChunkText(text, opt)
	if len(chunks) < 15 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for i, c := range chunks {
		if c.Text != text[c.Start:c.End] || c.Index != i {
			t.Fatalf("chunk %d offsets wrong", i)
		}
		if tok := EstimateTokens(c.Text); tok > opt.TargetTokens {
			t.Errorf("chunk %d has %d tokens", i, tok)
		}
		if !strings.HasPrefix(c.Text, "Sentence") || !strings.HasSuffix(c.Text, ".") {
			t.Errorf("chunk %d not sentence-aligned: %q", i, c.Text)
		}
		if i > 0 {
			prev := chunks[i-1]
			if c.Start >= prev.End {
				t.Errorf("chunk %d does not overlap the previous", i)
			} else if ov := EstimateTokens(text[c.Start:prev.End]); ov > opt.OverlapTokens || ov < 5 {
				t.Errorf("overlap %d tokens", ov)
			}
			if c.Start <= prev.Start {
				t.Errorf("no progress at %d", i)
			}
		}
	}
	if last := chunks[len(chunks)-1]; !strings.Contains(last.Text, "number 199 ") {
		t.Errorf("text lost at the end: %q", last.Text)
	}
	if got := ChunkText("", ChunkOptions{}); len(got) != 0 {
		t.Errorf("empty text: %v", got)
	}
}

func TestChunkLongSentenceSplit(t *testing.T) {
	t.Parallel()
	text := "Short one. " + strings.Repeat("word ", 1000) + "end. After."
	chunks := ChunkText(text, ChunkOptions{TargetTokens: 100, OverlapTokens: -1})
	if len(chunks) < 13 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for _, c := range chunks {
		if EstimateTokens(c.Text) > 100 {
			t.Errorf("too big: %d tokens", EstimateTokens(c.Text))
		}
		if strings.HasPrefix(c.Text, "ord") || strings.HasSuffix(c.Text, "wor") {
			t.Errorf("split inside a word: %q", c.Text)
		}
	}
	huge := strings.Repeat("x", 5000)
	for _, c := range ChunkText(huge, ChunkOptions{TargetTokens: 100}) {
		if EstimateTokens(c.Text) > 100 {
			t.Errorf("unbroken string chunk of %d bytes", len(c.Text))
		}
	}
}

func TestChunkPages(t *testing.T) {
	t.Parallel()
	pages := []string{"Page one text. More text.", "", "Page three. Yes."}
	chunks := ChunkPages(pages, ChunkOptions{})
	if len(chunks) != 2 || chunks[0].Page != 1 || chunks[1].Page != 3 || chunks[1].Index != 1 {
		t.Fatalf("%+v", chunks)
	}
	if pages[2][chunks[1].Start:chunks[1].End] != chunks[1].Text {
		t.Error("page offsets")
	}
	if EstimateTokens("one two three four five six seven eight nine ten") != 13 {
		t.Error("EstimateTokens")
	}
}
