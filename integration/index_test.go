//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/store/vector"
)

// passages cuts the recorded scholarly API answers into sentence pairs:
// real scientific prose, a few thousand passages.
func passages(t *testing.T, limit int) []string {
	t.Helper()
	root := filepath.Join("..", "..", "shared", "fixtures")
	tag := regexp.MustCompile(`<[^>]*>|\\[nrt]|&[a-z]+;`)
	seen := map[string]bool{}
	var sentences []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !(strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".xml")) {
			return nil
		}
		raw, _ := os.ReadFile(p)
		text := tag.ReplaceAllString(string(raw), " ")
		for _, s := range regexp.MustCompile(`[.!?]\s+`).Split(text, -1) {
			s = strings.Join(strings.Fields(s), " ")
			if len(strings.Fields(s)) >= 8 && !strings.ContainsAny(s, "{}[]\"") && !seen[s] {
				seen[s] = true
				sentences = append(sentences, s)
			}
		}
		return nil
	})
	var out []string
	for i := 0; i+1 < len(sentences) && len(out) < limit; i++ {
		out = append(out, sentences[i]+". "+sentences[i+1]+".")
	}
	if len(out) < 300 {
		t.Fatalf("only %d passages from %s", len(out), root)
	}
	return out
}

// The project's HNSW index against exact search on real embeddings: the
// tiny-embed model's 384-d vectors of real abstracts, through the real
// server. Same top-10 on a small collection, recall@10 ≥ 0.95 on all of it.
func TestIndexRecallOnRealEmbeddings(t *testing.T) {
	o := ollama(t, llm.OllamaOptions{})
	texts := passages(t, 4000)
	ctx := context.Background()
	var vecs [][]float32
	for start := 0; start < len(texts); start += 64 {
		v, _, err := o.Embed(ctx, embedModel, texts[start:min(start+64, len(texts))])
		if err != nil {
			t.Fatal(err)
		}
		vecs = append(vecs, v...)
	}
	queries := vecs[len(vecs)-100:] // held out
	vecs = vecs[:len(vecs)-100]
	t.Logf("%d passages embedded with %s (%d-d), 100 held out as queries", len(vecs), embedModel, len(vecs[0]))

	for _, n := range []int{300, len(vecs)} {
		exact := vector.NewExact(0)
		graph := vector.New(0, vector.Options{SwitchAt: 1, Seed: 1})
		defer graph.Close()
		for i, v := range vecs[:n] {
			id := fmt.Sprintf("p%05d", i)
			if err := exact.Add(id, v); err != nil {
				t.Fatal(err)
			}
			if err := graph.Add(id, v); err != nil {
				t.Fatal(err)
			}
		}
		graph.Wait(ctx)
		found, total, same := 0, 0, 0
		for _, q := range queries {
			want, _ := exact.Search(q, 10)
			got, err := graph.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]bool{}
			for _, h := range got {
				in[h.ID] = true
			}
			identical := len(got) == len(want)
			for i, h := range want {
				if in[h.ID] {
					found++
				}
				if identical && got[i].ID != h.ID {
					identical = false
				}
			}
			total += len(want)
			if identical {
				same++
			}
		}
		r := float64(found) / float64(total)
		t.Logf("%d vectors: recall@10 %.4f, identical top-10 for %d of %d queries", n, r, same, len(queries))
		if n == 300 && same != len(queries) {
			t.Errorf("on %d vectors the graph's top-10 differs from exact search for %d queries", n, len(queries)-same)
		}
		if r < 0.95 {
			t.Errorf("recall@10 = %.3f on %d real embeddings", r, n)
		}
	}
}
