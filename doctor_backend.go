package main

import (
	"context"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/llm"
)

func (d *doctor) checkBackend(ctx context.Context, b llm.Backend, cfg *Config) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.Ping(cctx); err != nil {
		d.bad("server", fmt.Sprintf("unreachable at %s (OLLAMA_HOST)", b.Host()),
			"start Ollama with `ollama serve` (install: https://ollama.com/download), or set OLLAMA_HOST to where it runs")
		return
	}
	d.ok("server", b.Host())
	for _, m := range []struct{ role, name, need string }{{"chat model", cfg.Model, "completion"}, {"embedding model", cfg.EmbedModel, "embedding"}} {
		info, err := b.Show(cctx, m.name)
		switch {
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
			d.ok(m.role, detail)
			if m.need == "completion" && info.ContextLength > 0 && info.ContextLength < 8192 {
				d.bad("context length", fmt.Sprintf("%d tokens is small for reports", info.ContextLength), "use a model with at least 8k context (e.g. qwen3:8b)")
			}
		}
	}
}
