package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/corpus"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/ui"
)

// The person's reference library (pipeline/corpus's library import):
// `library import zotero|FILE` syncs it into the corpus, `library list`
// shows its collections. This file parses the flags, reads the library
// (search/zotero, search/bib) and prints what the corpus package reports.

func libraryCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "library",
		Short: "Import your reference library (Zotero, BibTeX, CSL-JSON, RIS) as a source",
		Long: `Your reference library as part of the local source: its items are cited from their
metadata (authors, year, title, venue, DOI) and read from your own files.

  library import zotero          Zotero's database (Zotero closed), else its local API
  library import refs.bib        a BibTeX/BibLaTeX, CSL-JSON (.json) or RIS file
  library list [--json]          the collections, with counts

Importing again syncs: new items are added, changed ones updated, deleted ones removed;
only new text is embedded. Limit a run to collections with --collection NAME.`,
	}
	imp := &importFlags{}
	importCmd := &cobra.Command{
		Use:   "import zotero | FILE...",
		Short: "Import or sync a Zotero library or reference files",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(own, func(cfg *Config, st *store.Store) error {
				d := embedDeps(cmd, cfg, st)
				if len(args) == 1 && strings.EqualFold(args[0], "zotero") {
					return importZotero(cmd.Context(), cfg, d, imp, cmd.OutOrStdout(), cmd.ErrOrStderr())
				}
				if imp.name != "" && len(args) > 1 {
					return fmt.Errorf("%w: --name names one file's collection; give one file", errUsage)
				}
				for _, f := range args {
					if err := importFile(cmd.Context(), cfg, d, f, imp, cmd.OutOrStdout(), cmd.ErrOrStderr()); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	imp.register(importCmd)
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the collections of your library and corpus, with counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			return libraryList(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "one JSON object per collection and line")
	c.AddCommand(importCmd, list)
	return c
}

// embedDeps is the store and the embedding model an import or corpus add
// works with: embedded as a run does, with the model's task prefix for
// documents (pipeline owns the prefixes).
func embedDeps(cmd *cobra.Command, cfg *Config, st *store.Store) corpusDeps {
	d := corpusDeps{st: st, model: cfg.EmbedModel, parallel: max(cfg.modelParallel(), 2)}
	if b, err := newBackend(cfg); err == nil && cfg.EmbedModel != "" {
		d.embed = func(ctx context.Context, texts []string) ([][]float32, error) {
			return pipeline.EmbedDocuments(ctx, b, cfg.EmbedModel, texts)
		}
	} else if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "documents are indexed without embeddings: %v\n", err)
	}
	return d
}

// importFile imports one BibTeX, CSL-JSON or RIS file as the library named
// after it (or --name).
func importFile(ctx context.Context, cfg *Config, d corpusDeps, path string, imp *importFlags, out, errOut io.Writer) error {
	name := imp.name
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	data, err := bib.LoadFile(abs) // a regular file only, read through a cap
	if err != nil {
		if fi, serr := os.Stat(abs); serr == nil && fi.IsDir() {
			err = fmt.Errorf("%s: a folder, not a reference file (for documents, use researchtui corpus add)", textkit.StripControls(path))
		}
		return &exitError{exitUsage, errors.New(textkit.StripControls(err.Error()))}
	}
	items, problems := bib.Read(abs, data)
	if len(items) == 0 && len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(errOut, "%s: %s\n", textkit.StripControls(filepath.Base(path)), textkit.StripControls(p.Error()))
		}
		return &exitError{exitUsage, fmt.Errorf("%s: nothing could be read", textkit.StripControls(path))}
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	lib := corpus.Library{Name: name, Kind: bib.Format(abs, data), Origin: abs, Items: items, AttachmentDirs: imp.attachmentDirs(imp.dataDir)}
	for _, it := range items {
		lib.Collections = append(lib.Collections, it.Collections...)
	}
	return runImport(ctx, cfg, d, lib, problems, out, errOut)
}

// runImport syncs lib into the corpus and prints each item's outcome and
// the summary.
// problems are the library's entries that could not be read: reported as
// skipped, first.
func runImport(ctx context.Context, cfg *Config, d corpusDeps, lib corpus.Library, problems []error, out, errOut io.Writer) error {
	for _, p := range problems {
		var pe *bib.ParseError
		if errors.As(p, &pe) && pe.Imported {
			printOutcome(out, "note", "an entry", p.Error()) // read, with part of it cut
			continue
		}
		printOutcome(out, "skipped", "an entry", p.Error())
	}
	opt := corpus.Options{
		Manifest: cfg.corpusPath(),
		Store:    d.st,
		File:     func(verb, title, detail string) { printOutcome(out, verb, textkit.Clip(title, 90), detail) },
		Watch:    func(progress func() corpus.Progress) func() { return showIngestProgress(errOut, progress) },
	}
	if d.embed != nil {
		opt.Embedder = &corpus.Embedder{Model: d.model, Embed: d.embed, Parallel: d.parallel,
			Fatal: func(err error) bool { return llm.IsUnreachable(err) || llm.IsModelMissing(err) }}
	}
	res, err := corpus.ImportLibrary(ctx, opt, lib)
	if err != nil && !errors.Is(err, corpus.ErrInterrupted) {
		return err
	}
	fmt.Fprintf(out, "%d added, %d updated, %d unchanged, %d skipped, %d removed; library %s: %s\n",
		res.Added, res.Updated, res.Unchanged, res.Skipped+len(problems), res.Removed, textkit.StripControls(lib.Name), textkit.Plural(res.Added+res.Updated+res.Unchanged, "item", "items"))
	if res.Embedded != nil {
		fmt.Fprint(out, embeddingNote(res.Embedded, res.Progress, errors.Is(err, corpus.ErrInterrupted)))
	}
	if errors.Is(err, corpus.ErrInterrupted) {
		return &exitError{exitCancelled, err}
	}
	fmt.Fprintf(out, "search it with --sources local, or one collection with --collection %s (see `researchtui library list`)\n", quoteArg(lib.Name))
	return nil
}

// printOutcome is one line of an import's or a corpus add's report; the
// names and details are untrusted text.
func printOutcome(out io.Writer, verb, name, detail string) {
	switch {
	case verb == "skipped":
		fmt.Fprintf(out, "  %-9s %s: %s\n", verb, textkit.StripControls(name), textkit.StripControls(detail))
	case detail != "":
		fmt.Fprintf(out, "  %-9s %s (%s)\n", verb, textkit.StripControls(name), textkit.StripControls(detail))
	default:
		fmt.Fprintf(out, "  %-9s %s\n", verb, textkit.StripControls(name))
	}
}

// quoteArg quotes a name for a shell when it needs it.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"#$&*()[]{};<>?|\\`~") {
		return textkit.StripControls(s)
	}
	return "'" + strings.ReplaceAll(textkit.StripControls(s), "'", `'\''`) + "'"
}

func libraryList(cfg *Config, out, errOut io.Writer, asJSON bool) error {
	m, err := corpus.LoadManifest(cfg.corpusPath())
	if err != nil {
		return err
	}
	cols := m.Collections()
	const empty = "nothing imported yet: `researchtui library import zotero` or `researchtui library import FILE.bib`"
	if asJSON {
		if len(cols) == 0 {
			// No line on stdout is an empty list in JSON lines; a person
			// at a terminal still hears why.
			fmt.Fprintln(errOut, empty)
		}
		return jsonLines(out, cols)
	}
	if len(cols) == 0 {
		fmt.Fprintln(out, empty)
		return nil
	}
	for _, c := range cols {
		indent, what := "", c.Kind
		switch c.Kind {
		case "library":
			if l := m.Libraries[c.Library]; l != nil {
				what = "library · " + l.Kind + " · imported " + l.Imported.Local().Format("2006-01-02 15:04")
			}
		case "collection", "tag":
			indent = "  " + strings.Repeat("  ", strings.Count(c.Name, "/"))
		case "corpus":
			what = "loose documents of `corpus add`"
		}
		fmt.Fprintf(out, "%s%-40s %11s, %d with files · %s\n", indent, textkit.StripControls(textkit.Clip(c.Name, 40)), textkit.Plural(c.Items, "item", "items"), c.Files, what)
	}
	return nil
}

// jsonLines writes one JSON object per value and line.
func jsonLines[T any](out io.Writer, xs []T) error {
	enc := json.NewEncoder(out)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			return err
		}
	}
	return nil
}

// checkCollections refuses a run limited to collections the corpus does
// not have: it would search nothing.
func checkCollections(cfg *Config, names []string) error {
	if len(names) == 0 {
		return nil
	}
	m, err := corpus.LoadManifest(cfg.corpusPath())
	if err != nil {
		return err
	}
	unknown := m.UnknownCollections(names)
	if len(unknown) == 0 {
		return nil
	}
	var known []string
	for _, c := range m.Collections() {
		known = append(known, c.Name)
	}
	if len(known) == 0 {
		return fmt.Errorf("%w: no collection %s: nothing is imported (`researchtui library import`)", pipeline.ErrBadInput, textkit.StripControls(strings.Join(unknown, ", ")))
	}
	return fmt.Errorf("%w: no collection %s (there are: %s)", pipeline.ErrBadInput, textkit.StripControls(strings.Join(unknown, ", ")), textkit.StripControls(textkit.Clip(strings.Join(known, ", "), 300)))
}

// tuiCollections are the collections the new-research form offers.
func tuiCollections(cfg *Config) ([]ui.LibraryCollection, error) {
	m, err := corpus.LoadManifest(cfg.corpusPath())
	if err != nil {
		return nil, err
	}
	var out []ui.LibraryCollection
	for _, c := range m.Collections() {
		out = append(out, ui.LibraryCollection{Name: c.Name, Items: c.Items, Files: c.Files})
	}
	return out, nil
}
