package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// searchCommand searches everything ever read: every session's sources and
// the local corpus. It works offline (keyword matching) and is semantic
// when the embedding model answers.
func searchCommand() *cobra.Command {
	var asJSON bool
	var k int
	cmd := &cobra.Command{
		Use:   "search [--json] [-k N] QUERY",
		Short: "Search everything read so far (semantic with the embedding model, keywords offline)",
		RunE: func(cmd *cobra.Command, args []string) error {
			query := joinArgs(args)
			if query == "" {
				return fmt.Errorf("%w: what should be searched? e.g. researchtui search \"thermal conductivity of d-wave superconductors\"", errUsage)
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			a, err := openApp(cfg)
			if err != nil {
				return err
			}
			defer a.Close()
			if st := a.store.Local(); st != nil && cfg.EmbedModel != "" {
				openIndex(st, cfg.EmbedModel, cmd.ErrOrStderr())
			}
			passages, semantic, err := a.engine.SearchKnowledge(ctx, query, cfg.EmbedModel, k)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				for _, p := range passages {
					if err := enc.Encode(p); err != nil {
						return err
					}
				}
				return nil
			}
			if !semantic {
				fmt.Fprintf(cmd.ErrOrStderr(), "keyword search: the embedding model %s did not answer (see `researchtui doctor`)\n", cfg.EmbedModel)
			}
			if len(passages) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "nothing found; run a research or `researchtui corpus add` first")
				return nil
			}
			for i, p := range passages {
				year := ""
				if p.Year > 0 {
					year = fmt.Sprintf(" (%d)", p.Year)
				}
				page := ""
				if p.Page > 0 {
					page = fmt.Sprintf(", p. %d", p.Page)
				}
				fmt.Fprintf(out, "%2d. %s%s  [%s%s, %.2f]\n", i+1, textkit.StripControls(textkit.Clip(p.Title, 90)), year, p.Source, page, p.Score)
				fmt.Fprintf(out, "    %s\n", textkit.StripControls(textkit.Clip(oneLineText(p.Text), 220)))
				if p.URL != "" {
					fmt.Fprintf(out, "    %s\n", textkit.StripControls(p.URL))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per passage")
	cmd.Flags().IntVarP(&k, "k", "k", 10, "passages to show (one per source)")
	return cmd
}

// openIndex opens the vector index a semantic search uses before the
// search does (which then finds it open), so that a slow open is shown: on
// a terminal, a progress line while the vectors are read back from the
// store; afterwards, a line saying the index file was missing or damaged
// and was rebuilt (it is saved for the next search). An index that opens
// from its file says nothing. Errors are left to the search.
func openIndex(st *store.Store, model string, errOut io.Writer) {
	done := make(chan struct{})
	var drawn sync.WaitGroup
	bar := newProgressLine(errOut)
	if bar.tty {
		drawn.Add(1)
		go func() {
			defer drawn.Done()
			for {
				select {
				case <-done:
					bar.done()
					return
				case <-time.After(200 * time.Millisecond):
					if s, ok := st.IndexStatus(model); ok && s.Phase != "" {
						bar.step("vector index of "+model+": "+s.Phase, s.Done, s.Total)
					}
				}
			}
		}()
	}
	ix, err := st.Index(model)
	if err == nil {
		// the file's vectors are checked before the search answers from
		// them; a damaged file is reloaded from the store meanwhile
		err = ix.Verify(context.Background())
	}
	close(done)
	drawn.Wait()
	if err != nil {
		return
	}
	if s := ix.Status(); s.Note != "" && s.Vectors > 0 {
		fmt.Fprintf(errOut, "vector index of %s: %s\n", textkit.StripControls(model), textkit.StripControls(s.Note))
	}
}
