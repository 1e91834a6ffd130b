//go:build integration

// The test runs a headless research against the in-process fakes (the
// scripted model speaking Ollama's protocol, arXiv and OpenAlex replaying
// recorded answers) with export on, and asks Jaeger's query API what it
// stored. JAEGER_BIN names the collector's binary (default
// $(go env GOPATH)/bin/jaeger-all-in-one).

package jaeger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
)

var (
	binary   string // researchtui, built from this checkout
	otlpURL  string // Jaeger's OTLP/HTTP receiver
	queryURL string // Jaeger's query API
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	work, err := os.MkdirTemp("", "researchtui-jaeger-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	binary = filepath.Join(work, "researchtui")
	build := exec.Command("go", "build", "-o", binary, "../..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "jaeger: building researchtui:", err)
		return 1
	}
	stop, err := startJaeger(work)
	if err != nil {
		// The suite must not pass silently without its collector.
		fmt.Fprintln(os.Stderr, "jaeger: the collector is unavailable:", err)
		fmt.Fprintln(os.Stderr, "  .ci/run builds it into $(go env GOPATH)/bin/jaeger-all-in-one")
		return 1
	}
	defer stop()
	return m.Run()
}

func jaegerBin() string {
	if b := os.Getenv("JAEGER_BIN"); b != "" {
		return b
	}
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "jaeger-all-in-one"
	}
	return filepath.Join(strings.TrimSpace(string(gopath)), "bin", "jaeger-all-in-one")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startJaeger runs all-in-one with in-memory storage, every port on a free
// loopback port, and waits for its query API.
func startJaeger(work string) (func(), error) {
	bin := jaegerBin()
	if _, err := os.Stat(bin); err != nil {
		return nil, err
	}
	names := []string{"collector.otlp.http", "collector.otlp.grpc", "query.http-server", "query.grpc-server", "collector.http-server", "collector.grpc-server", "admin.http"}
	ports := map[string]int{}
	args := []string{}
	for _, n := range names {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[n] = p
		args = append(args, fmt.Sprintf("--%s.host-port=127.0.0.1:%d", n, p))
	}
	logPath := filepath.Join(work, "jaeger.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SPAN_STORAGE_TYPE=memory")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	}
	otlpURL = fmt.Sprintf("http://127.0.0.1:%d", ports["collector.otlp.http"])
	queryURL = fmt.Sprintf("http://127.0.0.1:%d", ports["query.http-server"])
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(queryURL + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return stop, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	b, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("no query API after 60 s; log:\n%s", tail(string(b), 3000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// jaegerTrace is what the query API returns for a trace.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		TraceID       string `json:"traceID"`
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			TraceID string `json:"traceID"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"tags"`
		Logs []struct {
			Fields []struct {
				Key   string `json:"key"`
				Value any    `json:"value"`
			} `json:"fields"`
		} `json:"logs"`
	} `json:"spans"`
}

func (t jaegerTrace) tag(i int, key string) (any, bool) {
	for _, kv := range t.Spans[i].Tags {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

func (t jaegerTrace) intTag(i int, key string) int {
	v, _ := t.tag(i, key)
	switch v := v.(type) {
	case float64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

// root is the index of the trace's span without a parent.
func (t jaegerTrace) root() int {
	for i, s := range t.Spans {
		parent := false
		for _, r := range s.References {
			parent = parent || r.RefType == "CHILD_OF" && r.TraceID == s.TraceID
		}
		if !parent {
			return i
		}
	}
	return -1
}

// traces asks Jaeger for the service's traces until n of them have a root
// and their span counts stop changing (the collector stores asynchronously).
func traces(t *testing.T, service string, n int) []jaegerTrace {
	t.Helper()
	q := url.Values{"service": {service}, "limit": {"50"}, "lookback": {"1h"}}
	var got []jaegerTrace
	last := -1
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(queryURL + "/api/traces?" + q.Encode())
		if err == nil {
			var body struct {
				Data []jaegerTrace `json:"data"`
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			got = body.Data
		}
		spans, rooted := 0, 0
		for _, tr := range got {
			spans += len(tr.Spans)
			if tr.root() >= 0 {
				rooted++
			}
		}
		if err == nil && rooted >= n && spans == last {
			return got
		}
		last = spans
		time.Sleep(time.Second)
	}
	t.Fatalf("Jaeger holds %d traces of %s, want %d", len(got), service, n)
	return nil
}

type cli struct {
	t   *testing.T
	env []string
}

func (c *cli) run(args ...string) (string, string, int) {
	c.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestRunTraceInJaeger: a headless run with OTEL_EXPORTER_OTLP_ENDPOINT set
// is one trace in Jaeger: a root span in the session (langfuse.session.id)
// with the run's scores, a span per stage, model spans whose tokens add up
// to the session's totals, source searches; a follow-up question on the
// session is a second trace that links back to the first.
func TestRunTraceInJaeger(t *testing.T) {
	script := &pipelinetest.Script{RevisionRounds: 1}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder()})
	defer oll.Close()
	src := sourcefake.New()
	defer src.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("full_text = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	service := fmt.Sprintf("researchtui-it-%d", time.Now().UnixNano())
	c := &cli{t: t, env: []string{
		"HOME=" + dir, "PATH=" + os.Getenv("PATH"),
		"RESEARCHTUI_DATA_DIR=" + filepath.Join(dir, "data"), "RESEARCHTUI_CONFIG=" + cfg,
		"OLLAMA_HOST=" + oll.URL,
		"RESEARCHTUI_ARXIV_URL=" + src.ArxivURL(), "RESEARCHTUI_OPENALEX_URL=" + src.OpenAlexURL(),
		"RESEARCHTUI_PUBMED_URL=http://127.0.0.1:1", "RESEARCHTUI_SEMANTICSCHOLAR_URL=http://127.0.0.1:1", "RESEARCHTUI_CROSSREF_URL=http://127.0.0.1:1",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlpURL, "OTEL_SERVICE_NAME=" + service,
	}}
	stdout, stderr, code := c.run("run", "--json", "--sources", "arxiv,openalex", "How is software testing studied?")
	if code != 0 {
		t.Fatalf("run exited %d\n%s", code, tail(stderr, 3000))
	}
	if strings.Contains(stderr, "tracing") {
		t.Errorf("the run warned about tracing: %s", stderr)
	}
	var id string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() && id == "" {
		var ev struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			id = ev.SessionID
		}
	}
	out, _, code := c.run("sessions", "show", id, "--json")
	var sess struct {
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Embedding  int `json:"embedding_tokens"`
		} `json:"usage"`
		Scores struct {
			StepsUsed    int `json:"steps_used"`
			Citations    int `json:"citations"`
			SourcesCited int `json:"sources_cited"`
		} `json:"scores"`
	}
	if err := json.Unmarshal([]byte(out), &sess); err != nil || code != 0 {
		t.Fatalf("sessions show: exit %d, %v", code, err)
	}

	trs := traces(t, service, 1)
	if len(trs) != 1 {
		t.Fatalf("Jaeger holds %d traces for one run", len(trs))
	}
	tr := trs[0]
	r := tr.root()
	if r < 0 || tr.Spans[r].OperationName != "research" {
		t.Fatalf("no root span named research in %d spans", len(tr.Spans))
	}
	if v, _ := tr.tag(r, "langfuse.session.id"); v != id {
		t.Errorf("root langfuse.session.id %v, want %s", v, id)
	}
	if got := tr.intTag(r, "researchtui.score.steps_used"); got != sess.Scores.StepsUsed || got == 0 {
		t.Errorf("steps_used on the trace %d, in the session %d", got, sess.Scores.StepsUsed)
	}
	if tr.intTag(r, "researchtui.score.citations") != sess.Scores.Citations || tr.intTag(r, "researchtui.score.sources_cited") != sess.Scores.SourcesCited {
		t.Errorf("citation scores on the trace %d/%d, in the session %d/%d", tr.intTag(r, "researchtui.score.citations"),
			tr.intTag(r, "researchtui.score.sources_cited"), sess.Scores.Citations, sess.Scores.SourcesCited)
	}
	stages := map[string]bool{}
	in, outTok, emb, searches := 0, 0, 0, 0
	for i, s := range tr.Spans {
		if strings.HasPrefix(s.OperationName, "stage ") {
			stages[strings.TrimPrefix(s.OperationName, "stage ")] = true
		}
		if strings.HasPrefix(s.OperationName, "search ") {
			searches++
		}
		switch op, _ := tr.tag(i, "gen_ai.operation.name"); op {
		case "chat":
			in += tr.intTag(i, "gen_ai.usage.input_tokens")
			outTok += tr.intTag(i, "gen_ai.usage.output_tokens")
			if m, _ := tr.tag(i, "gen_ai.request.model"); m != "qwen3:8b" {
				t.Errorf("model span %q: gen_ai.request.model %v", s.OperationName, m)
			}
		case "embeddings":
			emb += tr.intTag(i, "gen_ai.usage.input_tokens")
		}
		if _, ok := tr.tag(i, "gen_ai.input.messages"); ok {
			t.Errorf("span %q carries the prompt without trace_content", s.OperationName)
		}
	}
	for _, st := range []string{"plan", "research", "read", "index", "analyse", "retrieve", "write", "review", "finalise"} {
		if !stages[st] {
			t.Errorf("no span for stage %s", st)
		}
	}
	if in != sess.Usage.Prompt || outTok != sess.Usage.Completion || emb != sess.Usage.Embedding {
		t.Errorf("model spans' tokens %d/%d/%d, the session's %d/%d/%d", in, outTok, emb, sess.Usage.Prompt, sess.Usage.Completion, sess.Usage.Embedding)
	}
	if searches == 0 {
		t.Error("no source search spans")
	}
	t.Logf("Jaeger stored %d spans; model tokens %d/%d/%d", len(tr.Spans), in, outTok, emb)

	// A follow-up question is a second trace of the session, linked to
	// the first.
	if _, stderr, code := c.run("ask", id, "Which software testing techniques do these papers study?"); code != 0 {
		t.Fatalf("ask exited %d\n%s", code, tail(stderr, 2000))
	}
	trs = traces(t, service, 2)
	var second *jaegerTrace
	for i := range trs {
		if trs[i].TraceID != tr.TraceID {
			second = &trs[i]
		}
	}
	if second == nil {
		t.Fatalf("the follow-up made no second trace (%d traces)", len(trs))
	}
	r2 := second.root()
	if v, _ := second.tag(r2, "langfuse.session.id"); v != id {
		t.Errorf("the follow-up's trace is in session %v, want %s", v, id)
	}
	linked := false
	for _, ref := range second.Spans[r2].References {
		linked = linked || ref.TraceID == tr.TraceID && ref.SpanID == tr.Spans[r].SpanID
	}
	if !linked {
		t.Errorf("the follow-up's root %+v does not link to the first run's root %s/%s", second.Spans[r2].References, tr.TraceID, tr.Spans[r].SpanID)
	}
}
