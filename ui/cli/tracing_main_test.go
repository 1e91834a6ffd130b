package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// collector records what reaches it as an OTLP/HTTP endpoint.
type collector struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	bodies []string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.paths = append(c.paths, r.URL.Path)
		c.bodies = append(c.bodies, string(b))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) requests() ([]string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...), strings.Join(c.bodies, "")
}

// TestTracingOffByDefault: with no OTel variables a run exports nothing,
// and opening what a run needs starts no goroutine for tracing; with
// OTEL_EXPORTER_OTLP_ENDPOINT the same run's spans reach the collector,
// under the service name and with the session ID on them.
func TestTracingOffByDefault(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(v, "")
	}
	script := &pipelinetest.Script{RevisionRounds: 1}
	col := newCollector(t)
	c, _, _ := scriptedCLI(t, script)

	// In process: no tracer, no observer, nothing left running.
	t.Setenv("RESEARCHTUI_CONFIG", filepath.Join(c.dir, "config.toml"))
	t.Setenv("RESEARCHTUI_DATA_DIR", filepath.Join(c.dir, "data"))
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	a, err := openApp(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.tracer != nil || a.engine.Observe != nil {
		t.Error("tracing is on with no OTel variables")
	}
	a.Close()
	goleak.VerifyNone(t, before)

	// A run: nothing reaches the collector, which nobody was told of.
	if _, stderr, code, _ := c.run("run", "--sources", "arxiv,openalex", "How is software testing studied?"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if paths, _ := col.requests(); len(paths) != 0 {
		t.Fatalf("exported with tracing off: %v", paths)
	}

	// Told of it, the run's trace arrives.
	c.env = append(c.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL, "OTEL_SERVICE_NAME=researchtui-under-test")
	stdout, stderr, code, _ := c.run("run", "--json", "--sources", "arxiv,openalex", "How is software testing studied?")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	paths, body := col.requests()
	if len(paths) == 0 || paths[0] != "/v1/traces" {
		t.Fatalf("collector got %v, want /v1/traces", paths)
	}
	id := sessionIDOf(t, stdout)
	for _, want := range []string{"researchtui-under-test", "langfuse.session.id", id, "gen_ai.usage.input_tokens", "stage plan"} {
		if !strings.Contains(body, want) {
			t.Errorf("the exported spans lack %q", want)
		}
	}
	if strings.Contains(stderr, "tracing") {
		t.Errorf("a working collector made a warning: %s", stderr)
	}
}

func sessionIDOf(t *testing.T, ndjson string) string {
	t.Helper()
	const key = `"session_id":"`
	i := strings.Index(ndjson, key)
	if i < 0 {
		t.Fatal("no session_id in the events")
	}
	rest := ndjson[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}
