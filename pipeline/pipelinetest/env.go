package pipelinetest

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
	"github.com/researchtui/researchtui/store"
)

// Env is a complete offline research set-up: a store in a temp dir, the
// fake Ollama server driven by a Script, and fake arXiv/OpenAlex servers
// replaying real recorded responses.
type Env struct {
	Script  *Script
	Ollama  *ollamafake.Server
	Sources *sourcefake.Server
	Store   *store.Store
	Engine  *pipeline.Engine
	// Client is the HTTP client the sources use (no politeness limits on
	// the fakes), for tests that add sources.
	Client *search.Client
	DBPath string
}

// Model and EmbedModel are the model names the fake serves.
const (
	Model      = "qwen3:8b"
	EmbedModel = "nomic-embed-text"
)

// NewEnv starts the fakes and opens a store in dir (t.TempDir() when empty).
// Everything is closed when the test ends.
func NewEnv(tb testing.TB, script *Script, dir string) *Env {
	tb.Helper()
	if script == nil {
		script = &Script{RevisionRounds: 1}
	}
	if dir == "" {
		dir = tb.TempDir()
	}
	e := &Env{Script: script, DBPath: filepath.Join(dir, "researchtui.db")}
	// Answers as long as an 8B model's are counted as a tokenizer would
	// (characters / 4), so token economics measured on them mean something.
	e.Ollama = ollamafake.New(ollamafake.Options{Responder: script.Responder(), TokensByChars: script.Realistic})
	tb.Cleanup(e.Ollama.Close)
	e.Sources = sourcefake.New()
	tb.Cleanup(e.Sources.Close)
	st, err := store.Open(e.DBPath, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	e.Store = st
	backend, err := llm.NewOllama(e.Ollama.URL, llm.OllamaOptions{RequestTimeout: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	client := search.NewClient(search.ClientOptions{BaseBackoff: time.Millisecond, Retries: 1})
	// The fake sources answer at once; the politeness limits real APIs need
	// would only add sleeps that no test is about.
	client.SetHostLimit(strings.TrimPrefix(e.Sources.URL, "http://"), 0)
	e.Client = client
	e.Engine = &pipeline.Engine{
		Store: st,
		LLM:   backend,
		Sources: map[string]search.Source{
			"arxiv":    search.NewArxiv(client, e.Sources.ArxivURL()),
			"openalex": search.NewOpenAlex(client, e.Sources.OpenAlexURL(), ""),
		},
	}
	return e
}

// Options are run options for the fakes' models.
func (e *Env) Options(question string) runopts.Options {
	return runopts.Options{Question: question, Model: Model, EmbedModel: EmbedModel, Sources: []string{"arxiv", "openalex"}, MaxRevisions: 2}
}
