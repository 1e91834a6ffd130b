package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

func sessionsCommand() *cobra.Command {
	c := &cobra.Command{Use: "sessions", Short: "List, show, export and delete past sessions (offline)"}
	c.AddCommand(sessionsList(), sessionsShow(), sessionsExport(), sessionsDelete(), sessionsTrace())
	return c
}

func sessionsList() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "One line (or JSON object) per session, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			const none = "no sessions yet; start one with `researchtui run \"QUESTION\"` or `researchtui`"
			if cfg, err := loadConfig(); err == nil {
				if _, err := os.Stat(cfg.dbPath()); errors.Is(err, fs.ErrNotExist) {
					// Nothing to list: say so without making a database
					if !asJSON {
						fmt.Fprintln(cmd.ErrOrStderr(), none)
					}
					return nil
				}
			}
			return withStore(reach, func(_ *Config, st store.DB) error {
				all, err := st.ListSessions()
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				enc := json.NewEncoder(out)
				// How each was asked, where not a standard run in English: a
				// column only when some session has it.
				short, shortW := make([]string, len(all)), 0
				for i, s := range all {
					var o runopts.Options
					if json.Unmarshal(s.Options, &o) == nil {
						short[i] = textkit.StripControls(o.Short())
						shortW = max(shortW, len([]rune(short[i])))
					}
				}
				for i, s := range all {
					if asJSON {
						if err := enc.Encode(s); err != nil { // Report is empty in the list: omitted
							return err
						}
						continue
					}
					asked := ""
					if shortW > 0 {
						asked = fmt.Sprintf("%-*s  ", shortW, short[i])
					}
					fmt.Fprintf(out, "%s  %-26s  %s  %7d tok  %s%s\n", s.ID, statusAt(s), s.CreatedAt.Local().Format("2006-01-02 15:04"),
						s.Usage.PromptTokens+s.Usage.CompletionTokens, asked, textkit.StripControls(textkit.Clip(s.Title, 70))+livingNote(s))
				}
				if len(all) == 0 && !asJSON {
					fmt.Fprintln(cmd.ErrOrStderr(), none)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	return cmd
}

func sessionsShow() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: question, status, usage, sources, report",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(reach, func(_ *Config, st store.DB) error {
				d, err := history.LoadDetail(st, args[0])
				if err != nil {
					return notFound(args[0], err)
				}
				s := d.Session
				out := cmd.OutOrStdout()
				if asJSON {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					return enc.Encode(d)
				}
				fmt.Fprintf(out, "%s\n%s\n\nquestion  %s\nstatus    %s\ncreated   %s\nmodel     %s\n",
					textkit.StripControls(s.Title), strings.Repeat("=", len([]rune(textkit.StripControls(s.Title)))), textkit.StripControls(s.Question), statusAt(s),
					s.CreatedAt.Local().Format("2006-01-02 15:04"), s.Model) // the list's format
				var asked runopts.Options
				if json.Unmarshal(s.Options, &asked) == nil {
					fmt.Fprintf(out, "asked     %s\n", textkit.StripControls(asked.Summary()))
				}
				fmt.Fprintf(out, "tokens    %d prompt, %d completion, %d embedding\n", s.Usage.PromptTokens, s.Usage.CompletionTokens, s.Usage.EmbeddingTokens)
				if s.Error != "" {
					fmt.Fprintf(out, "error     %s\n", textkit.StripControls(s.Error))
				}
				if sc := d.Scores; sc != nil {
					review := "no review"
					if sc.Reviewed {
						review = "reviewer " + map[bool]string{true: "approved", false: "not approved"}[sc.ReviewerApproved]
					}
					fmt.Fprintf(out, "scores    %s, %s, %d of %d model calls allowed, %.0f%% of cited sentences grounded, %s of %s, model busy %.0f%% of the run\n",
						review, textkit.Plural(sc.RevisionRounds, "revision round", "revision rounds"), sc.StepsUsed, sc.StepsBudget, 100*sc.GroundingRatio,
						textkit.Plural(sc.Citations, "citation", "citations"), textkit.Plural(sc.SourcesCited, "source", "sources"), 100*sc.ModelUtil)
				}
				if f := d.Funnel; f != nil && f.Found > 0 {
					fmt.Fprintf(out, "funnel    %d found, %d read, %d analysed, %d cited (%.0f%% of those read)\n", f.Found, f.Read, f.Analysed, f.Cited, 100*f.CitedOfRead)
					for _, q := range f.BySubQ { // a source read for several sub-questions counts for each
						if q.Screened > 0 {
							fmt.Fprintf(out, "          %s: %d found, %d screened, %d judged on topic, %d read, %d analysed, %d cited\n", textkit.StripControls(q.ID), q.Found, q.Screened, q.OnTopic, q.Read, q.Analysed, q.Cited)
							continue
						}
						fmt.Fprintf(out, "          %s: %d found, %d relevant by their words, %d read, %d analysed, %d cited\n", textkit.StripControls(q.ID), q.Found, q.Relevant, q.Read, q.Analysed, q.Cited)
					}
				}
				if sr := d.Screen; sr != nil && sr.Screened+sr.Unjudged > 0 {
					fmt.Fprintf(out, "screen    %d judged (%d on topic, %d off), %d looked at again (%d changed), %s, %d prompt and %d generated tokens\n",
						sr.Screened, sr.OnTopic, sr.Rejected, sr.Rechecked, sr.Changed, textkit.Plural(sr.Calls, "call", "calls"), sr.PromptTokens, sr.CompletionTokens)
					for _, fb := range sr.Fallbacks {
						fmt.Fprintf(out, "          %s\n", textkit.StripControls(fb))
					}
				}
				if pr := d.PlanReview; pr != nil {
					fmt.Fprintf(out, "plan      reviewed: %s\n", textkit.StripControls(pr.Text()))
					for _, q := range pr.Deleted {
						fmt.Fprintf(out, "          - deleted: %s\n", textkit.StripControls(q))
					}
					for _, q := range pr.Added {
						fmt.Fprintf(out, "          + added: %s\n", textkit.StripControls(q))
					}
					for _, q := range pr.Edited {
						fmt.Fprintf(out, "          ~ edited: %s\n", textkit.StripControls(q))
					}
				}
				for i, dec := range d.Decisions {
					fmt.Fprintf(out, "%-9s round %d: %s\n", map[bool]string{true: "reviews", false: ""}[i == 0], i+1, textkit.StripControls(decisionLine(d, i, dec)))
				}
				if f := d.Flow; f != nil {
					fmt.Fprintf(out, "prisma    %d identified, %d duplicates, %d screened, %d excluded, %d sought, %d not retrieved, %d assessed, %d included\n",
						f.Identified, f.Duplicates, f.Screened, f.Excluded, f.Sought, f.NotRetrieved, f.Assessed, f.Included)
				}
				if l := s.Living; l != nil && l.Every > 0 {
					fmt.Fprintf(out, "follows   every %s; next due %s\n", store.EveryText(l.Every), pipeline.LastChecked(st, s).Add(l.Every).Local().Format("2006-01-02 15:04"))
				}
				for i, c := range d.Updates {
					fmt.Fprintf(out, "%-9s %s: %s; %s, %s generated, %s\n", map[bool]string{true: "updates", false: ""}[i == 0],
						c.At.Local().Format("2006-01-02 15:04"), checkLine(c), textkit.Plural(c.Queries, "query", "queries"), textkit.Plural(c.GeneratedTokens, "token", "tokens"), c.Elapsed.Round(100*time.Millisecond))
				}
				if len(d.Sources) > 0 {
					fmt.Fprintf(out, "\nsources\n")
					for _, c := range d.Sources {
						fmt.Fprintf(out, "  [%d] %s\n", c.N, textkit.StripControls(report.PlainReference(c.Reference)))
					}
				}
				if s.Report != "" {
					fmt.Fprintf(out, "\n%s\n", textkit.StripControls(s.Report))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON with sources, citations, reviews and report")
	return cmd
}

func sessionsExport() *cobra.Command {
	var format, out string
	var version, since int
	cmd := &cobra.Command{
		Use:   "export ID --format md|html|json|bibtex|ris|csljson [--out FILE]",
		Short: "Export a session's report",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(reach, func(_ *Config, st store.DB) error {
				if _, err := st.Session(args[0]); err != nil {
					return notFound(args[0], err)
				}
				rep, err := pipeline.LoadReport(st, args[0])
				if err != nil {
					return &exitError{exitFailed, err}
				}
				switch {
				case since < 0 || version < 0 || cmd.Flags().Changed("since") && since == 0:
					return fmt.Errorf("%w: versions are numbered from 1 (sessions show lists them)", errUsage)
				case since != 0 && version != 0:
					return fmt.Errorf("%w: give --version or --since, not both", errUsage)
				case since != 0 && format != "bibtex" && format != "ris" && format != "csljson":
					return fmt.Errorf("%w: --since exports the references of the works added since a version: use --format bibtex, ris or csljson", errUsage)
				case since != 0:
					if rep, err = history.ReferencesSince(st, rep, since); err != nil {
						return fmt.Errorf("%w: %v", errUsage, err)
					}
					if len(rep.Sources) == 0 {
						fmt.Fprintf(cmd.ErrOrStderr(), "no works were added after version %d\n", since)
					}
				case version != 0:
					if rep, err = history.ReportVersion(st, rep, version); err != nil {
						return fmt.Errorf("%w: %v", errUsage, err)
					}
				}
				data, err := history.ExportReport(rep, format)
				if err != nil {
					return err
				}
				if out == "" {
					_, err = cmd.OutOrStdout().Write(data)
					return err
				}
				if err := os.WriteFile(out, data, 0o644); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "md|html|json|bibtex|ris|csljson (ris and csljson import into Zotero and other reference managers)")
	cmd.Flags().StringVar(&out, "out", "", "write to FILE instead of stdout")
	cmd.Flags().IntVar(&version, "version", 0, "the report version to export (default: the latest)")
	cmd.Flags().IntVar(&since, "since", 0, "with --format bibtex, ris or csljson: only the works added after this version (an update's new works)")
	return cmd
}

func sessionsDelete() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a session (what it read stays in the shared knowledge base)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(reach, func(_ *Config, st store.DB) error {
				if err := st.DeleteSession(args[0]); err != nil {
					return notFound(args[0], err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "deleted %s\n", args[0])
				return nil
			})
		},
	}
}

func notFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: no session %q (see `researchtui sessions list`)", runopts.ErrBadInput, id)
	}
	return err
}

// sessionsTrace is `sessions trace ID`: the run's waterfall from its stored
// event log (stages, agents, model busy time and idle gaps, tokens, the
// critical path), offline; --json gives the same data to scripts.
func sessionsTrace() *cobra.Command {
	var asJSON bool
	var width int
	cmd := &cobra.Command{
		Use:   "trace ID [--json]",
		Short: "Show where a session's time and tokens went: a waterfall of stages, agents and model calls",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(reach, func(_ *Config, st store.DB) error {
				if _, err := st.Session(args[0]); err != nil {
					return notFound(args[0], err)
				}
				evs, err := pipeline.LoadEvents(st, args[0])
				if err != nil {
					return err
				}
				tl := history.BuildTimeline(args[0], evs)
				out := cmd.OutOrStdout()
				if asJSON {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					return enc.Encode(tl)
				}
				_, err = io.WriteString(out, textkit.StripControls(tl.Waterfall(width)))
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "the timeline as JSON")
	cmd.Flags().IntVar(&width, "width", 100, "columns to draw in")
	return cmd
}

// decisionLine is what the person decided on review round i, with the
// note they typed for the writer.
func decisionLine(d history.SessionDetail, i int, dec pipeline.Decision) string {
	line := "revisions rejected"
	if dec.Approve {
		line = "approved"
		if i < len(d.Reviews) {
			asked := len(d.Reviews[i].Requests)
			taken := asked
			if len(dec.Accepted) > 0 {
				taken = len(dec.Accepted)
			}
			line = fmt.Sprintf("%d of %s accepted", taken, textkit.Plural(asked, "request", "requests"))
		}
	}
	if note := strings.TrimSpace(dec.Note); note != "" {
		line += fmt.Sprintf("; note: %q", oneLineText(note))
	}
	return line
}

// statusAt is a session's status with, for one that did not complete,
// the stage it stopped in ("interrupted (at write)"), as the TUI's list
// says it.
func statusAt(s store.Session) string {
	if s.Stage == "" || s.Status == store.StatusCompleted || s.Status == store.StatusRunning {
		return s.Status
	}
	return s.Status + " (at " + textkit.CleanLine(s.Stage) + ")"
}
