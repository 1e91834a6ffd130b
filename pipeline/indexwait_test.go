package pipeline_test

import (
	"os"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// A run whose vector index must be loaded from the store's embeddings
// before it can serve (its file missing, or damaged) says so in its event
// stream, with the reason, as a warning on the index stage; the report's
// own warnings (findings about the research) leave it out. A run whose
// index opens from a sound file says nothing.
func TestRunShowsAnIndexRebuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := pipelinetest.NewEnv(t, nil, dir)
	pipelinetest.RunToEnd(t, env, env.Options(question))
	if st, ok := env.Store.IndexStatus(pipelinetest.EmbedModel); !ok || st.Vectors == 0 {
		t.Fatalf("the first run indexed nothing: %+v", st)
	}
	file := env.Store.IndexPath(pipelinetest.EmbedModel)
	env.Store.Close()

	for _, c := range []struct {
		name, want string
		spoil      func()
	}{
		{"sound file", "", func() {}},
		{"missing file", "no index file", func() { os.Remove(file) }},
		{"damaged file", "checksum", func() {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			data[30] ^= 0x5a // in the header: found at open
			os.WriteFile(file, data, 0o600)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spoil()
			env := pipelinetest.NewEnv(t, nil, dir)
			evs, sess := pipelinetest.RunToEnd(t, env, env.Options(question+" again"))
			var said []string
			for _, ev := range evs {
				if ev.Type == pipeline.Warning && ev.Agent == "vector index" {
					said = append(said, ev.Message)
					if ev.Stage != pipeline.StageIndex {
						t.Errorf("stage %q", ev.Stage)
					}
				}
			}
			if c.want == "" {
				if len(said) > 0 {
					t.Fatalf("index opened from its file, but the run said %q", said)
				}
			} else if len(said) == 0 || !strings.Contains(said[len(said)-1], c.want) || !strings.Contains(said[len(said)-1], "vectors loaded") {
				st, _ := env.Store.IndexStatus(pipelinetest.EmbedModel)
				t.Fatalf("the run said %q, want a line with %q (%+v)", said, c.want, st)
			}
			rep, err := pipeline.LoadReport(env.Store, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range rep.Warnings {
				if strings.Contains(w, "vector index") {
					t.Errorf("report warning %q", w)
				}
			}
			env.Store.Close()
		})
	}
}
