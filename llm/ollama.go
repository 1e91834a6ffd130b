package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// OllamaOptions tunes the Ollama backend. The zero value is usable.
type OllamaOptions struct {
	// HTTPClient is used for every request; nil means a client without a
	// global timeout (streams can be long; see RequestTimeout).
	HTTPClient *http.Client
	// KeepAlive is sent as keep_alive (how long Ollama keeps the model
	// loaded after a call); 0 leaves Ollama's default.
	KeepAlive time.Duration
	// RequestTimeout bounds one call (a whole streamed answer); default 10m.
	RequestTimeout time.Duration
	// StallTimeout ends an answer that has begun and then gives no new
	// token for this long (DefaultStallTimeout when 0, never when < 0).
	StallTimeout time.Duration
	// DefaultContext is the smallest num_ctx sent; default 4096.
	DefaultContext int
	// EmbedBatchSize is how many inputs go in one /api/embed request;
	// default 64.
	EmbedBatchSize int
}

// Ollama is the Backend for an Ollama server, over its native API.
type Ollama struct {
	client *api.Client
	base   *url.URL
	opt    OllamaOptions

	mu    sync.Mutex
	shows map[string]ModelInfo
}

var _ Backend = (*Ollama)(nil)

// NewOllama returns a backend for the Ollama server at host. host "" reads
// OLLAMA_HOST as Ollama itself does (default http://127.0.0.1:11434); the
// scheme and port are optional ("localhost", "10.0.0.5:11434",
// "https://ollama.example.org").
func NewOllama(host string, opt OllamaOptions) (*Ollama, error) {
	var base *url.URL
	if strings.TrimSpace(host) == "" {
		base = envconfig.Host()
	} else {
		var err error
		if base, err = ParseHost(host); err != nil {
			return nil, err
		}
	}
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{}
	}
	if opt.RequestTimeout <= 0 {
		opt.RequestTimeout = 10 * time.Minute
	}
	if opt.StallTimeout == 0 {
		opt.StallTimeout = DefaultStallTimeout
	}
	if opt.DefaultContext <= 0 {
		opt.DefaultContext = 4096
	}
	if opt.EmbedBatchSize <= 0 {
		opt.EmbedBatchSize = 64
	}
	return &Ollama{
		client: api.NewClient(base, opt.HTTPClient),
		base:   base,
		opt:    opt,
		shows:  map[string]ModelInfo{},
	}, nil
}

// ParseHost turns an OLLAMA_HOST-style value into a base URL, following
// Ollama's own rules: scheme optional (http), port optional (11434 without
// a scheme, else the scheme's default), "" means 127.0.0.1:11434.
func ParseHost(s string) (*url.URL, error) {
	s = strings.Trim(strings.TrimSpace(s), "\"'")
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return nil, fmt.Errorf("ollama host %q: unsupported scheme %q (use http or https)", s, scheme)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	h, port, err := net.SplitHostPort(hostport)
	if err != nil {
		h, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			h = ip.String()
		} else if hostport != "" {
			h = hostport
		}
	}
	if h == "" {
		h = "127.0.0.1"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("ollama host %q: invalid port %q", s, port)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(h, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u, nil
}

// Name is "ollama".
func (o *Ollama) Name() string { return "ollama" }

// Host is the base URL in use, e.g. "http://127.0.0.1:11434".
func (o *Ollama) Host() string { return o.base.String() }

// callCtx bounds one call by RequestTimeout.
func (o *Ollama) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, o.opt.RequestTimeout,
		fmt.Errorf("%w (no answer within %s)", ErrTimeout, o.opt.RequestTimeout))
}

// mapErr turns transport and API errors into the package's typed errors.
// parent is the caller's context, call the per-call one.
func (o *Ollama) mapErr(parent, call context.Context, model string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := stoppedBy(parent, call); cerr != nil {
		return cerr
	}
	var se api.StatusError
	if errors.As(err, &se) {
		msg := strings.ToLower(se.ErrorMessage)
		if se.StatusCode == http.StatusNotFound && strings.Contains(msg, "not found") && model != "" {
			return &ModelMissingError{Model: model}
		}
		return fmt.Errorf("ollama %s: %w", model, err)
	}
	if isDialError(err) {
		return &UnreachableError{Host: o.Host(), Err: err}
	}
	if model != "" {
		return fmt.Errorf("ollama %s: %w", model, err)
	}
	return fmt.Errorf("ollama: %w", err)
}

// stoppedBy says why a call ended when a context, not the server, ended
// it: the caller's cancellation first, else the per-call deadline's cause.
func stoppedBy(parent, call context.Context) error {
	if perr := parent.Err(); perr != nil {
		return perr
	}
	if call != nil && call.Err() != nil {
		return context.Cause(call)
	}
	return nil
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// Ping checks that the server answers /api/version.
func (o *Ollama) Ping(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := o.client.Version(cctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &UnreachableError{Host: o.Host(), Err: err}
	}
	return nil
}

// Version returns the server's version string.
func (o *Ollama) Version(ctx context.Context) (string, error) {
	v, err := o.client.Version(ctx)
	return v, o.mapErr(ctx, nil, "", err)
}

// ListModels lists the installed models (/api/tags), e.g. "qwen3:8b".
func (o *Ollama) ListModels(ctx context.Context) ([]string, error) {
	cctx, cancel := o.callCtx(ctx)
	defer cancel()
	resp, err := o.client.List(cctx)
	if err != nil {
		return nil, o.mapErr(ctx, cctx, "", err)
	}
	names := make([]string, 0, len(resp.Models))
	for _, m := range resp.Models {
		n := m.Name
		if n == "" {
			n = m.Model
		}
		names = append(names, n)
	}
	return names, nil
}

// Show describes a model (/api/show); answers are cached per model name.
func (o *Ollama) Show(ctx context.Context, model string) (ModelInfo, error) {
	o.mu.Lock()
	mi, ok := o.shows[model]
	o.mu.Unlock()
	if ok {
		return mi, nil
	}
	cctx, cancel := o.callCtx(ctx)
	defer cancel()
	resp, err := o.client.Show(cctx, &api.ShowRequest{Model: model})
	if err != nil {
		return ModelInfo{}, o.mapErr(ctx, cctx, model, err)
	}
	mi = ModelInfo{Name: model, Family: resp.Details.Family, ContextLength: contextLength(resp)}
	for _, c := range resp.Capabilities {
		mi.Capabilities = append(mi.Capabilities, string(c))
	}
	o.mu.Lock()
	o.shows[model] = mi
	o.mu.Unlock()
	return mi, nil
}

// contextLength finds "<arch>.context_length" in model_info.
func contextLength(r *api.ShowResponse) int {
	num := func(v any) int {
		switch n := v.(type) {
		case float64:
			return int(n)
		case int:
			return n
		case int64:
			return int(n)
		}
		return 0
	}
	var keys []string
	if arch, ok := r.ModelInfo["general.architecture"].(string); ok && arch != "" {
		keys = append(keys, arch+".context_length")
	}
	if r.Details.Family != "" {
		keys = append(keys, r.Details.Family+".context_length")
	}
	for _, k := range keys {
		if n := num(r.ModelInfo[k]); n > 0 {
			return n
		}
	}
	for k, v := range r.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if n := num(v); n > 0 {
				return n
			}
		}
	}
	return 0
}

// Embed returns one vector per input, sending EmbedBatchSize inputs per
// request. Usage.EmbeddingTokens is the sum of prompt_eval_count.
func (o *Ollama) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	var u Usage
	if len(inputs) == 0 {
		return nil, u, nil
	}
	out := make([][]float32, 0, len(inputs))
	for start := 0; start < len(inputs); start += o.opt.EmbedBatchSize {
		end := min(start+o.opt.EmbedBatchSize, len(inputs))
		batch := inputs[start:end]
		req := &api.EmbedRequest{Model: model, Input: batch}
		if o.opt.KeepAlive != 0 {
			req.KeepAlive = &api.Duration{Duration: o.opt.KeepAlive}
		}
		cctx, cancel := o.callCtx(ctx)
		resp, err := o.client.Embed(cctx, req)
		if err != nil {
			err = o.mapErr(ctx, cctx, model, err)
			cancel()
			return nil, u, err
		}
		cancel()
		if len(resp.Embeddings) != len(batch) {
			return nil, u, fmt.Errorf("ollama %s: asked for %d embeddings, got %d", model, len(batch), len(resp.Embeddings))
		}
		out = append(out, resp.Embeddings...)
		u.EmbeddingTokens += resp.PromptEvalCount
		u.TotalDuration += resp.TotalDuration
	}
	return out, u, nil
}
