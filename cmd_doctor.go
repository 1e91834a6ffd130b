package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/llm"
)

func doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the backend, models, context sizes, sources and store; print fixes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			d := &doctor{w: cmd.OutOrStdout()}
			d.run(cmd.Context(), cfg)
			if d.problems > 0 {
				return &exitError{exitFailed, fmt.Errorf("%d problem(s) found; the fixes are listed above", d.problems)}
			}
			fmt.Fprintln(d.w, "\nall good")
			return nil
		},
	}
}

type doctor struct {
	w        io.Writer
	problems int
}

func (d *doctor) ok(what, detail string) { fmt.Fprintf(d.w, "  ✓ %-22s %s\n", what, detail) }
func (d *doctor) info(what, detail string) {
	fmt.Fprintf(d.w, "  · %-22s %s\n", what, detail)
}
func (d *doctor) bad(what, detail, fix string) {
	d.problems++
	fmt.Fprintf(d.w, "  ✗ %-22s %s\n    fix: %s\n", what, detail, fix)
}

func (d *doctor) run(ctx context.Context, cfg *Config) {
	fmt.Fprintf(d.w, "researchtui %s\n\nfiles\n", version)
	d.info("config", cfg.configPath)
	d.info("data", cfg.dataDir)
	d.checkStore(cfg)

	fmt.Fprintf(d.w, "\nmodel backend (%s)\n", cfg.Backend)
	b, err := newBackend(cfg)
	if err != nil {
		d.bad("backend", err.Error(), "use --backend ollama or set backend = \"ollama\" in the config")
	} else {
		d.checkBackend(ctx, b, cfg)
	}

	fmt.Fprintf(d.w, "\nsources\n")
	d.checkSources(ctx, cfg)
}

func (d *doctor) checkStore(cfg *Config) {
	st, err := openStore(cfg)
	if err != nil {
		d.bad("store", err.Error(), "close the other researchtui, or check the permissions of "+cfg.dataDir)
		return
	}
	defer st.Close()
	sessions, err := st.ListSessions()
	if err != nil {
		d.bad("store", err.Error(), "the database may be damaged; move "+cfg.dbPath()+" aside to start afresh")
		return
	}
	d.ok("store", fmt.Sprintf("%s (%d sessions)", cfg.dbPath(), len(sessions)))
}

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

func (d *doctor) checkSources(ctx context.Context, cfg *Config) {
	srcs, _ := newSources(cfg)
	for _, name := range []string{"arxiv", "openalex"} {
		src := srcs[name]
		cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		start := time.Now()
		_, err := src.Search(cctx, "graphene", 1)
		cancel()
		if err != nil {
			d.bad(name, "unreachable: "+sanitize(truncate(err.Error(), 100)), "check the network or RESEARCHTUI_"+envName(name)+"_URL; runs degrade to the sources that answer")
			continue
		}
		d.ok(name, fmt.Sprintf("answered in %s", time.Since(start).Round(time.Millisecond)))
	}
	for _, name := range []string{"pubmed", "semanticscholar", "crossref", "web", "local"} {
		d.info(name, "not available in this build yet")
	}
	if os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1" {
		d.info("downloads", "private and loopback addresses allowed (RESEARCHTUI_ALLOW_PRIVATE_FETCH=1)")
	}
}

func envName(source string) string {
	switch source {
	case "arxiv":
		return "ARXIV"
	case "openalex":
		return "OPENALEX"
	}
	return source
}
