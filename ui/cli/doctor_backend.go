package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
)

func (d *doctor) checkBackend(ctx context.Context, b llm.Backend, cfg *Config) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	openai := b.Name() == "openai"
	if err := b.Ping(cctx); err != nil {
		var auth *llm.AuthError
		switch {
		case errors.As(err, &auth):
			d.bad("server", fmt.Sprintf("%s rejected the API key (HTTP %d)", b.Host(), auth.Status),
				"set OPENAI_API_KEY (or openai_api_key in the config) to a valid key for this server")
		case openai:
			d.bad("server", fmt.Sprintf("unreachable at %s (RESEARCHTUI_OPENAI_BASE_URL)", b.Host()),
				"start the server (vLLM, llama.cpp server, LM Studio, `ollama serve` for its /v1), or set RESEARCHTUI_OPENAI_BASE_URL to where it runs, e.g. http://localhost:8000/v1")
		default:
			d.bad("server", fmt.Sprintf("unreachable at %s (OLLAMA_HOST)", b.Host()),
				"start Ollama with `ollama serve` (install: https://ollama.com/download), or set OLLAMA_HOST to where it runs")
		}
		return
	}
	d.ok("server", b.Host())
	if p, ok := b.(*llm.Pool); ok {
		d.checkPool(p)
	}
	if openai {
		d.openAINotes(cctx, b, cfg)
	}
	for _, m := range []struct{ role, name, need string }{{"chat model", cfg.Model, "completion"}, {"embedding model", cfg.EmbedModel, "embedding"}} {
		info, err := b.Show(cctx, m.name)
		switch {
		case llm.IsModelMissing(err) && openai:
			d.bad(m.role, m.name+" is not served", strings.TrimPrefix(err.Error(), fmt.Sprintf("model %q is not available: ", m.name)))
		case llm.IsModelMissing(err):
			d.bad(m.role, m.name+" is not installed", fmt.Sprintf("ollama pull %s", m.name))
		case err != nil:
			d.bad(m.role, err.Error(), "check the model name")
		case len(info.Capabilities) > 0 && !info.Has(m.need):
			d.bad(m.role, fmt.Sprintf("%s cannot do %s (it has %v)", m.name, m.need, info.Capabilities), "choose another model with --model / --embed-model")
		default:
			detail := m.name
			if info.ContextLength > 0 {
				detail += fmt.Sprintf(", context %d tokens", info.ContextLength)
			}
			if info.Has("thinking") {
				detail += ", thinks"
			}
			if openai && m.need == "embedding" {
				// Capabilities are unknown over this API: try it.
				vecs, _, err := b.Embed(cctx, m.name, []string{"researchtui doctor"})
				if err != nil || len(vecs) != 1 || len(vecs[0]) == 0 {
					d.bad(m.role, fmt.Sprintf("%s did not embed a test sentence: %v", m.name, err), "choose an embedding model the server offers with --embed-model")
					continue
				}
				detail += fmt.Sprintf(", %d dimensions", len(vecs[0]))
			}
			d.ok(m.role, detail)
			if m.need == "completion" && info.ContextLength > 0 && info.ContextLength < 8192 {
				d.bad("context length", fmt.Sprintf("%d tokens is small for reports", info.ContextLength), "use a model with at least 8k context (e.g. qwen3:8b)")
			}
			if openai && m.need == "completion" && info.ContextLength == 0 {
				d.info("context length", "unknown: the server does not report it; set openai_context_length in the config so over-long prompts are cut here instead of failing on the server")
			}
		}
	}
}

// checkPool reports each host of a multi-host Ollama set-up (the Ping
// before refreshed their states).
func (d *doctor) checkPool(p *llm.Pool) {
	for _, h := range p.Status() {
		if h.Up {
			d.ok("  host", h.Host)
		} else {
			d.bad("  host", fmt.Sprintf("%s is unreachable: calls go to the other hosts until it answers again", h.Host),
				"start Ollama there, or remove it from OLLAMA_HOST")
		}
	}
}

// openAINotes says what the OpenAI-compatible API cannot do that Ollama's
// can, and how researchtui behaves instead.
func (d *doctor) openAINotes(ctx context.Context, b llm.Backend, cfg *Config) {
	if cfg.OpenAIAPIKey == "" {
		d.info("api key", "none (OPENAI_API_KEY unset): fine for local servers; hosted APIs need one")
	} else {
		d.info("api key", "set (OPENAI_API_KEY)")
	}
	if l, ok := b.(interface {
		ListModels(context.Context) ([]string, error)
	}); ok {
		if ids, err := l.ListModels(ctx); err == nil {
			shown := ids
			if len(shown) > 8 {
				shown = append(shown[:8:8], fmt.Sprintf("… %d more", len(ids)-8))
			}
			d.info("models served", strings.Join(shown, ", "))
		}
	}
	d.info("num_ctx", "not settable over this API: the server's own context length applies (vLLM --max-model-len, llama.cpp -c, LM Studio load settings); prompts are cut here when the length is known")
	d.info("keep_alive", "not available: the server decides how long models stay loaded")
	d.info("temperature", "sent with every call that sets one; calls that leave it unset get the server's default (OpenAI 1.0, Ollama 0.8, vLLM the model's generation config)")
	d.info("thinking", "no portable switch: not requested; reasoning text a server streams (reasoning_content) is shown, never parsed")
}
