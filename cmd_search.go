package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
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
			a, err := openApp(cfg)
			if err != nil {
				return err
			}
			defer a.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
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
				fmt.Fprintf(out, "%2d. %s%s  [%s%s, %.2f]\n", i+1, sanitize(truncate(p.Title, 90)), year, p.Source, page, p.Score)
				fmt.Fprintf(out, "    %s\n", sanitize(truncate(oneLineText(p.Text), 220)))
				if p.URL != "" {
					fmt.Fprintf(out, "    %s\n", sanitize(p.URL))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per passage")
	cmd.Flags().IntVarP(&k, "k", "k", 10, "passages to show (one per source)")
	return cmd
}
