package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Names of the settings the OpenAI-compatible backend reads, for messages.
const (
	OpenAIBaseURLEnv = "RESEARCHTUI_OPENAI_BASE_URL"
	OpenAIKeyEnv     = "OPENAI_API_KEY"
	// OpenAIDefaultBaseURL is used when no base URL is set but a key is.
	OpenAIDefaultBaseURL = "https://api.openai.com/v1"
)

// OpenAIOptions tunes the OpenAI-compatible backend. The zero value is usable.
type OpenAIOptions struct {
	// APIKey is sent as a bearer token; "" sends none (most local servers
	// need none).
	APIKey string
	// HTTPClient is used for every request; nil means a client without a
	// global timeout (see RequestTimeout).
	HTTPClient *http.Client
	// RequestTimeout bounds one call (a whole streamed answer); default 10m.
	RequestTimeout time.Duration
	// StallTimeout ends an answer that has begun and then gives no new
	// token for this long (DefaultStallTimeout when 0, never when < 0).
	StallTimeout time.Duration
	// MaxRetries is how often a call is retried on 408/409/429/5xx and
	// connection errors, honouring Retry-After; 0 means the default (2),
	// a negative value none.
	MaxRetries int
	// MaxRetryDelay caps one wait between retries (a longer Retry-After
	// fails the call at once with a *RateLimitError); default 60s.
	MaxRetryDelay time.Duration
	// EmbedBatchSize is how many inputs go in one /embeddings request;
	// default 64.
	EmbedBatchSize int
	// ContextLength is the model's context window when the server does not
	// say (0: unknown). Prompts longer than it are cut before sending.
	ContextLength int
}

// OpenAI is the Backend for a server of the OpenAI chat-completions API:
// vLLM (one endpoint in front of a cluster), llama.cpp's server, LM Studio,
// Ollama's /v1, OpenAI, OpenRouter.
//
// What the API cannot do that Ollama's can: no num_ctx (the server's own
// context length applies; prompts that would not fit are cut here when the
// length is known), no keep_alive (the server manages loading), no thinking
// switch (reasoning text some servers stream as reasoning_content is kept
// apart as Thinking), and capabilities are unknown. Temperatures are sent
// whenever the caller sets one, so servers' different defaults only apply
// to calls that leave it unset.
type OpenAI struct {
	client openai.Client
	base   string
	opt    OpenAIOptions

	mu     sync.Mutex
	models map[string]ModelInfo // by id, from /models
	listed bool
}

var _ Backend = (*OpenAI)(nil)

// NewOpenAI returns a backend for the OpenAI-compatible API at baseURL
// (e.g. "http://localhost:8000/v1"). A base URL without a path gets "/v1".
func NewOpenAI(baseURL string, opt OpenAIOptions) (*OpenAI, error) {
	base, err := ParseOpenAIBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if opt.RequestTimeout <= 0 {
		opt.RequestTimeout = 10 * time.Minute
	}
	if opt.StallTimeout == 0 {
		opt.StallTimeout = DefaultStallTimeout
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = 2
	}
	if opt.MaxRetryDelay <= 0 {
		opt.MaxRetryDelay = 60 * time.Second
	}
	if opt.EmbedBatchSize <= 0 {
		opt.EmbedBatchSize = 64
	}
	hc := opt.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(max(opt.MaxRetries, 0)),
		option.WithMaxRetryDelay(opt.MaxRetryDelay),
	}
	if opt.APIKey != "" {
		opts = append(opts, option.WithAPIKey(opt.APIKey))
	} else {
		// Not the environment's key either: the caller decides.
		opts = append(opts, option.WithAPIKey("none"))
	}
	return &OpenAI{
		client: openai.NewClient(opts...),
		base:   base,
		opt:    opt,
		models: map[string]ModelInfo{},
	}, nil
}

// ParseOpenAIBaseURL checks a base URL and adds "/v1" when it has no path.
func ParseOpenAIBaseURL(s string) (string, error) {
	s = strings.Trim(strings.TrimSpace(s), "\"'")
	if s == "" {
		return "", fmt.Errorf("no OpenAI-compatible server address: set %s (e.g. http://localhost:8000/v1 for vLLM, %s for OpenAI)", OpenAIBaseURLEnv, OpenAIDefaultBaseURL)
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%s %q is not an http(s) URL", OpenAIBaseURLEnv, s)
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/v1"
	}
	return strings.TrimRight(u.String(), "/") + "/", nil
}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Host is the base URL in use.
func (o *OpenAI) Host() string { return strings.TrimRight(o.base, "/") }

func (o *OpenAI) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, o.opt.RequestTimeout,
		fmt.Errorf("%w (no answer within %s)", ErrTimeout, o.opt.RequestTimeout))
}

func (o *OpenAI) unreachable(err error) error {
	return &UnreachableError{
		Host: o.Host(), Err: err,
		Server: "the OpenAI-compatible server", EnvVar: OpenAIBaseURLEnv,
		Hint: "Start it (vLLM, llama.cpp server, LM Studio, `ollama serve`) or check the address",
	}
}

// mapErr turns transport and API errors into the package's typed errors.
func (o *OpenAI) mapErr(parent, call context.Context, model string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := stoppedBy(parent, call); cerr != nil {
		return cerr
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		detail := ae.Message
		switch {
		case ae.StatusCode == http.StatusUnauthorized || ae.StatusCode == http.StatusForbidden:
			return &AuthError{Host: o.Host(), Status: ae.StatusCode, EnvVar: OpenAIKeyEnv, Detail: detail}
		case ae.StatusCode == http.StatusNotFound && model != "" &&
			(ae.Code == "model_not_found" || strings.Contains(strings.ToLower(detail), "model") || strings.Contains(strings.ToLower(detail), "not found")):
			return o.missing(model)
		case ae.StatusCode == http.StatusTooManyRequests:
			return &RateLimitError{Host: o.Host(), Model: model, RetryAfter: retryAfter(ae.Response), Detail: detail}
		}
		if detail == "" {
			detail = http.StatusText(ae.StatusCode)
		}
		return fmt.Errorf("openai-compatible server %s, model %s: HTTP %d: %s", o.Host(), model, ae.StatusCode, detail)
	}
	if isDialError(err) {
		return o.unreachable(err)
	}
	return fmt.Errorf("openai-compatible server %s, model %s: %w", o.Host(), model, err)
}

func (o *OpenAI) missing(model string) error {
	fix := fmt.Sprintf("the server at %s does not serve it; choose one it lists (researchtui doctor shows them) with --model / --embed-model", o.Host())
	o.mu.Lock()
	var ids []string
	for id := range o.models {
		ids = append(ids, id)
	}
	o.mu.Unlock()
	if n := len(ids); n > 0 && n <= 12 {
		slices.Sort(ids)
		fix = fmt.Sprintf("the server at %s serves %s; choose one with --model / --embed-model", o.Host(), strings.Join(ids, ", "))
	}
	return &ModelMissingError{Model: model, Fix: fix}
}

// retryAfter reads Retry-After-Ms or Retry-After (seconds or an HTTP date).
func retryAfter(r *http.Response) time.Duration {
	if r == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(r.Header.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(r.Header.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// Ping checks that the server answers GET /models (no retries).
func (o *OpenAI) Ping(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := o.client.Models.List(cctx, option.WithMaxRetries(0))
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		if ae.StatusCode == http.StatusUnauthorized || ae.StatusCode == http.StatusForbidden {
			return &AuthError{Host: o.Host(), Status: ae.StatusCode, EnvVar: OpenAIKeyEnv, Detail: ae.Message}
		}
		// It answered; listing may simply not be offered.
		return nil
	}
	return o.unreachable(err)
}

// ListModels lists the model ids the server offers (GET /models).
func (o *OpenAI) ListModels(ctx context.Context) ([]string, error) {
	if err := o.loadModels(ctx, true); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ids := make([]string, 0, len(o.models))
	for id := range o.models {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (o *OpenAI) loadModels(ctx context.Context, force bool) error {
	o.mu.Lock()
	done := o.listed
	o.mu.Unlock()
	if done && !force {
		return nil
	}
	cctx, cancel := o.callCtx(ctx)
	defer cancel()
	page, err := o.client.Models.List(cctx)
	if err != nil {
		return o.mapErr(ctx, cctx, "", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range page.Data {
		o.models[m.ID] = ModelInfo{Name: m.ID, ContextLength: modelContext(m)}
	}
	o.listed = true
	return nil
}

// modelContext reads the context window some servers add to /models
// entries: vLLM max_model_len, LM Studio max_context_length, others
// context_length / context_window, llama.cpp meta.n_ctx_train.
func modelContext(m openai.Model) int {
	for _, k := range []string{"max_model_len", "max_context_length", "context_length", "context_window"} {
		if f, ok := m.JSON.ExtraFields[k]; ok {
			if n, err := strconv.Atoi(strings.TrimSpace(f.Raw())); err == nil && n > 0 {
				return n
			}
		}
	}
	if f, ok := m.JSON.ExtraFields["meta"]; ok {
		var meta struct {
			NCtx      int `json:"n_ctx"`
			NCtxTrain int `json:"n_ctx_train"`
		}
		if json.Unmarshal([]byte(f.Raw()), &meta) == nil {
			if meta.NCtx > 0 {
				return meta.NCtx
			}
			return meta.NCtxTrain
		}
	}
	return 0
}

// Show describes a model from the server's /models listing (cached). A model
// the listing lacks is a *ModelMissingError naming what it offers; a server
// that offers no listing is taken at its word. Capabilities are unknown
// over this API and left empty; ContextLength is OpenAIOptions.ContextLength
// unless the listing says.
func (o *OpenAI) Show(ctx context.Context, model string) (ModelInfo, error) {
	err := o.loadModels(ctx, false)
	if err != nil {
		if IsUnreachable(err) || ctx.Err() != nil {
			return ModelInfo{}, err
		}
		return ModelInfo{Name: model, ContextLength: o.opt.ContextLength}, nil
	}
	o.mu.Lock()
	mi, ok := o.models[model]
	if !ok && !strings.Contains(model, ":") {
		mi, ok = o.models[model+":latest"] // Ollama's /v1 lists tags
	}
	empty := len(o.models) == 0
	o.mu.Unlock()
	if !ok {
		if empty {
			return ModelInfo{Name: model, ContextLength: o.opt.ContextLength}, nil
		}
		return ModelInfo{}, o.missing(model)
	}
	mi.Name = model
	if mi.ContextLength == 0 {
		mi.ContextLength = o.opt.ContextLength
	}
	return mi, nil
}

// Embed returns one vector per input, EmbedBatchSize inputs per request.
// Usage.EmbeddingTokens is the sum of the responses' usage.prompt_tokens.
func (o *OpenAI) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	var u Usage
	if len(inputs) == 0 {
		return nil, u, nil
	}
	out := make([][]float32, 0, len(inputs))
	for start := 0; start < len(inputs); start += o.opt.EmbedBatchSize {
		batch := inputs[start:min(start+o.opt.EmbedBatchSize, len(inputs))]
		cctx, cancel := o.callCtx(ctx)
		t0 := time.Now()
		resp, err := o.client.Embeddings.New(cctx, openai.EmbeddingNewParams{
			Model:          openai.EmbeddingModel(model),
			Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
			EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
		})
		if err != nil {
			err = o.mapErr(ctx, cctx, model, err)
			cancel()
			return nil, u, err
		}
		cancel()
		if len(resp.Data) != len(batch) {
			return nil, u, fmt.Errorf("openai-compatible server %s, model %s: asked for %d embeddings, got %d", o.Host(), model, len(batch), len(resp.Data))
		}
		vecs := make([][]float32, len(batch))
		for i, d := range resp.Data {
			idx := int(d.Index)
			if idx < 0 || idx >= len(batch) || vecs[idx] != nil {
				idx = i
			}
			v := make([]float32, len(d.Embedding))
			for j, x := range d.Embedding {
				v[j] = float32(x)
			}
			vecs[idx] = v
		}
		out = append(out, vecs...)
		u.EmbeddingTokens += int(resp.Usage.PromptTokens)
		u.TotalDuration += time.Since(t0)
	}
	return out, u, nil
}

// responseFormat maps Schema / JSONMode to response_format.
func responseFormat(req ChatRequest) (openai.ChatCompletionNewParamsResponseFormatUnion, bool) {
	switch {
	case len(req.Schema) > 0:
		var schema any
		if json.Unmarshal(req.Schema, &schema) != nil {
			schema = json.RawMessage(req.Schema)
		}
		return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: schema},
		}}, true
	case req.JSONMode:
		return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}, true
	}
	return openai.ChatCompletionNewParamsResponseFormatUnion{}, false
}

func jsonUnmarshalString(raw string, s *string) bool {
	return json.Unmarshal([]byte(raw), s) == nil
}
