package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// An analyst reads a paper's body, not its reference list, even when the
// list's cited titles sit as close to the question as the body does: a
// reference chunk wins only when nothing in the body comes near.
func TestSourceEvidencePrefersTheBodyToTheReferenceList(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const model = "m"
	texts := []struct {
		text string
		refs bool
		vec  []float32
	}{
		{"Abstract: pattern formation in zebrafish skin.", false, []float32{0.5, 0.866}},
		{"Methods: we image pigment cells over weeks.", false, []float32{0.8, 0.6}},
		{"Results: stripes form by short-range activation.", false, []float32{0.9, 0.436}},
		{"[1] Turing, The chemical basis of morphogenesis. [2] Kondo, Reaction-diffusion waves on zebrafish skin.", true, []float32{0.95, 0.312}},
	}
	chunks := make([]store.Chunk, len(texts))
	embs := map[string][]float32{}
	for i, x := range texts {
		chunks[i] = store.Chunk{ID: store.ChunkID("p", i), SourceKey: "p", Seq: i, Text: x.text, References: x.refs, Hash: store.HashText(x.text)}
		embs[chunks[i].Hash] = x.vec
	}
	if err := st.PutChunks("p", chunks); err != nil {
		t.Fatal(err)
	}
	if err := st.PutEmbeddings(model, embs); err != nil {
		t.Fatal(err)
	}
	o := &orchestrator{engine: &Engine{Store: st}, opt: runopts.Options{EmbedModel: model}}
	query := [][]float32{{1, 0}}
	got := o.sourceEvidence(search.Record{Key: "p"}, chunks, query)
	if len(got) == 0 || got[0].ID != chunks[2].ID {
		t.Fatalf("best evidence %v, want the results chunk first", ids(got))
	}
	for _, c := range got {
		if c.ID == chunks[3].ID && c.Score >= got[0].Score {
			t.Errorf("the reference list (%.2f) ranks with the body (%.2f)", c.Score, got[0].Score)
		}
	}
	// The results chunk is the paper's last body chunk: its neighbour, the
	// reference list, is not pulled in after it as context.
	for i, c := range got {
		if c.ID == chunks[3].ID && i > 0 && got[i-1].ID == chunks[2].ID && c.Score == got[i-1].Score*0.9 {
			t.Error("the reference list came in as the results chunk's neighbour")
		}
	}
	// With only the reference list near the question, it is still used.
	onlyRefs := o.sourceEvidence(search.Record{Key: "p"}, chunks[3:], query)
	if len(onlyRefs) != 1 || onlyRefs[0].ID != chunks[3].ID {
		t.Errorf("reference list alone: %v", ids(onlyRefs))
	}
}

func ids(cs []ContextChunk) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}
