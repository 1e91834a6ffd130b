package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/ui"
)

// The person's reference library (corpus's library import):
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
  library import refs.bib        a BibTeX/BibLaTeX, CSL-JSON (.json), RIS or Web of Science file
  library list [--json]          the libraries and their collections, with counts
  library remove NAME            forget a library (your files are not touched)

Importing again syncs: new items are added, changed ones updated, deleted ones removed;
only new text is embedded. Then limit a run to collections with
` + "`researchtui run --collection NAME`" + `.`,
	}
	imp := &importFlags{}
	importCmd := &cobra.Command{
		Use:   "import zotero | FILE...",
		Short: "Import or sync a Zotero library or reference files",
		Long: `Import or sync your Zotero library, or reference files: BibTeX/BibLaTeX (.bib), CSL-JSON
(.json), RIS (.ris) or Web of Science's tagged export (savedrecs.txt).

Each file is a library named after it (refs.bib is "refs"); importing the same file
again syncs that library: new entries are added, changed ones updated, deleted ones
removed, and an entry that cannot be read this time keeps its item. A second file
whose name is taken becomes a library of its own ("references-b" for b/references.bib).
Files given together are read together: a crossref may name an entry of another.

Nothing is dropped without a line saying so: entries that cannot be read are
"skipped" with their line; keys given or made up, copies merged and guessed encodings
are "notes". Exit 0 when everything was imported, 1 when some files were not, 2 when
nothing was.

--data-dir, --api, --api-url and --base-dir are for Zotero only.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(own, func(cfg *Config, st *store.Store) error {
				d := embedDeps(cmd, cfg, st)
				if len(args) == 1 && strings.EqualFold(args[0], "zotero") {
					return importZotero(cmd.Context(), cfg, d, imp, cmd.OutOrStdout(), cmd.ErrOrStderr())
				}
				if imp.name != "" && len(args) > 1 {
					return fmt.Errorf("%w: --name names one file's collection; give one file", errUsage)
				}
				return importFiles(cmd.Context(), cfg, d, args, imp, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	imp.register(importCmd)
	var asJSON, withTags bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the collections of your library and corpus, with counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			return libraryList(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON, withTags)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "one JSON object per collection and line")
	list.Flags().BoolVar(&withTags, "tags", false, "list every tag (#tag), not only how many each library has")
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Forget an imported library: its items are no longer searched (your files are not touched)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(own, func(cfg *Config, st *store.Store) error {
				m, err := corpus.LoadManifest(cfg.corpusPath())
				if err != nil {
					return err
				}
				if m.Libraries[args[0]] == nil {
					var names []string
					for _, l := range m.LibraryEntries() {
						names = append(names, l.Name)
					}
					return fmt.Errorf("%w: no library %s (there are: %s)", errUsage, textkit.StripControls(args[0]), textkit.StripControls(cmp.Or(strings.Join(names, ", "), "none")))
				}
				n, err := corpus.RemoveLibrary(corpus.Options{Manifest: cfg.corpusPath(), Store: st}, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "library %s removed: %s no longer searched; %s was not touched\n",
					textkit.StripControls(args[0]), textkit.Plural(n, "item", "items"), textkit.StripControls(m.Libraries[args[0]].Origin))
				return nil
			})
		},
	}
	c.AddCommand(importCmd, list, remove)
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

// importFiles imports reference files, each as the library named after it
// (or --name). The files are read together, so an entry's crossref may
// name an entry of another of them. A file that yields nothing is said and
// imported not at all: an empty export never empties a library. The exit
// is non-zero when a file could not be imported.
func importFiles(ctx context.Context, cfg *Config, d corpusDeps, paths []string, imp *importFlags, out, errOut io.Writer) error {
	if imp.encoding != "" && !bib.KnownEncoding(imp.encoding) {
		return fmt.Errorf("%w: --encoding %s is not one of latin1, cp1252, latin2, cp1250, latin9", errUsage, textkit.StripControls(imp.encoding))
	}
	m, err := corpus.LoadManifest(cfg.corpusPath())
	if err != nil {
		return err
	}
	var files []bib.File
	var shown []string
	failed := 0
	for _, path := range paths {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		data, err := bib.LoadFile(abs) // a regular file only, read through a cap
		if err != nil {
			if fi, serr := os.Stat(abs); serr == nil && fi.IsDir() {
				err = fmt.Errorf("%s: a folder, not a reference file (for documents, use researchtui corpus add)", path)
			} else if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("%s: no such file", path)
			}
			fmt.Fprintln(errOut, textkit.StripControls(err.Error()))
			failed++
			continue
		}
		files, shown = append(files, bib.File{Name: abs, Data: data, Encoding: imp.encoding}), append(shown, path)
	}
	items, problems := bib.ReadFiles(files)
	if context := crossrefContext(m, files, problems); len(context) > 0 {
		// A crossref into a file imported before (procs.bib, imported with
		// krr.bib last time): read that file too, so a sync of krr.bib
		// alone keeps what its entries inherit.
		items, problems = bib.ReadFiles(append(files, context...))
		items, problems = items[:len(files)], problems[:len(files)]
	}
	imported, named := 0, map[string]string{}
	for i, f := range files {
		if len(items[i]) == 0 {
			for _, p := range problems[i] {
				fmt.Fprintf(errOut, "%s: %s\n", textkit.StripControls(filepath.Base(shown[i])), textkit.StripControls(strings.TrimPrefix(p.Error(), filepath.Base(f.Name)+": ")))
			}
			if l := m.LibraryOf(f.Name); l != nil {
				fmt.Fprintf(errOut, "%s: nothing imported; the library %s keeps its items\n", textkit.StripControls(shown[i]), textkit.StripControls(l.Name))
			}
			failed++
			continue
		}
		name, note, err := libraryName(m, f.Name, imp.name, imp.replace, named)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		lib := corpus.Library{Name: name, Kind: bib.Format(f.Name, f.Data), Origin: f.Name, Items: items[i], AttachmentDirs: imp.attachmentDirs(imp.dataDir)}
		for _, p := range problems[i] {
			var pe *bib.ParseError
			switch {
			case errors.As(p, &pe) && pe.Imported:
			case pe != nil && pe.Key != "" && pe.Count == 0:
				lib.Unread = append(lib.Unread, pe.Key)
			default:
				lib.UnreadUnnamed = true
			}
		}
		for _, it := range items[i] {
			lib.Collections = append(lib.Collections, it.Collections...)
		}
		if err := runImport(ctx, cfg, d, lib, problems[i], out, errOut); err != nil {
			return err
		}
		if note != "" { // after the summary, where it is read, not 5,000 lines up
			fmt.Fprintln(out, textkit.StripControls(note))
		}
		imported++
		if m, err = corpus.LoadManifest(cfg.corpusPath()); err != nil {
			return err
		}
	}
	switch {
	case imported == 0:
		return &exitError{exitUsage, errors.New("nothing was imported")}
	case failed > 0:
		return &exitError{exitFailed, fmt.Errorf("%s of %d not imported", textkit.Plural(failed, "file", "files"), len(paths))}
	}
	return nil
}

// crossrefContext are the files of the libraries imported before that may
// resolve the crossrefs the files read left unresolved; none when all
// resolved.
func crossrefContext(m *corpus.Manifest, files []bib.File, problems [][]error) []bib.File {
	unresolved := false
	for _, ps := range problems {
		for _, p := range ps {
			var pe *bib.ParseError
			unresolved = unresolved || errors.As(p, &pe) && pe.Crossref != ""
		}
	}
	if !unresolved {
		return nil
	}
	given := map[string]bool{}
	for _, f := range files {
		given[f.Name] = true
	}
	var out []bib.File
	for _, l := range m.LibraryEntries() {
		if l.Kind != "bibtex" || given[l.Origin] {
			continue
		}
		if data, err := bib.LoadFile(l.Origin); err == nil {
			out = append(out, bib.File{Name: l.Origin, Data: data})
		}
	}
	return out
}

// badLibraryName says why a name cannot be a library's: it would read as
// another kind of collection in --collection.
func badLibraryName(name string) string {
	switch {
	case strings.EqualFold(name, corpus.LooseCollection):
		return "corpus is the collection of `corpus add`'s documents"
	case strings.EqualFold(name, "zotero"):
		return "zotero is the name of the Zotero library"
	case strings.HasPrefix(name, "#"):
		return "a name starting with # is a tag"
	case strings.Contains(name, "/"):
		return "a name with / is a collection inside another"
	case strings.TrimSpace(name) == "":
		return "a name cannot be empty"
	}
	return ""
}

// libraryName is the library a file is imported as. A library is its
// file: importing the same file again syncs the library it became, under
// whatever name. A new file is named after itself (or --name); when that
// name is another file's library, the new one is named after its folder
// too ("references-b" for b/references.bib), never replacing the other
// unless --replace says so. note tells the person what was chosen.
func libraryName(m *corpus.Manifest, origin, asked string, replace bool, named map[string]string) (name, note string, err error) {
	if l := m.LibraryOf(origin); l != nil {
		if asked == "" || asked == l.Name {
			return l.Name, "", nil
		}
		return "", "", fmt.Errorf("%s is the library %s already; to rename it, `researchtui library remove %s`, then import it with --name %s",
			origin, l.Name, quoteArg(l.Name), quoteArg(asked))
	}
	if asked != "" {
		if why := badLibraryName(asked); why != "" {
			return "", "", fmt.Errorf("--name %s: %s", asked, why)
		}
	}
	base := strings.TrimSuffix(filepath.Base(origin), filepath.Ext(origin))
	base = strings.TrimSuffix(base, ".csl") // refs.csl.json is refs
	if badLibraryName(base) != "" {
		base = "library-" + strings.NewReplacer("/", "-", "#", "").Replace(base)
	}
	name = cmp.Or(asked, base)
	other := m.Libraries[name]
	if o, ok := named[name]; ok && o != origin {
		other = &corpus.LibraryEntry{Name: name, Origin: o}
	}
	switch {
	case other == nil || other.Origin == origin:
	case replace:
		note = fmt.Sprintf("library %s: replaces the library of %s (--replace)", name, other.Origin)
	case asked != "":
		return "", "", fmt.Errorf("the library %s is %s; choose another --name, or --replace to replace it", name, other.Origin)
	default:
		folder := filepath.Base(filepath.Dir(origin))
		name = base + "-" + folder
		for n := 2; m.Libraries[name] != nil || named[name] != ""; n++ {
			name = fmt.Sprintf("%s-%s-%d", base, folder, n)
		}
		note = fmt.Sprintf("importing as library %s: the name %s is the library of %s (--name chooses another name, --replace takes it over)", name, base, other.Origin)
	}
	named[name] = origin
	return name, note, nil
}

// runImport syncs lib into the corpus and prints each item's outcome and
// the summary.
// problems are the library's entries that could not be read: reported as
// skipped, first.
func runImport(ctx context.Context, cfg *Config, d corpusDeps, lib corpus.Library, problems []error, out, errOut io.Writer) error {
	skipped, notes := 0, 0
	for _, p := range problems {
		var pe *bib.ParseError
		n := 1
		if errors.As(p, &pe) && pe.Count > 0 {
			n = pe.Count
		}
		if pe != nil && pe.Imported {
			printOutcome(out, "note", "an entry", p.Error()) // read: a key given, part of it cut
			notes += n
			continue
		}
		printOutcome(out, "skipped", "an entry", p.Error())
		skipped += n
	}
	opt := corpus.Options{
		Manifest: cfg.corpusPath(),
		Store:    d.st,
		File: func(verb, title, detail string) {
			if verb != "unchanged" { // a sync of 5,000 items lists what changed, and counts the rest
				printOutcome(out, verb, textkit.Clip(title, 90), detail)
			}
		},
		Watch: func(progress func() corpus.Progress) func() { return showIngestProgress(errOut, progress) },
	}
	if d.embed != nil {
		opt.Embedder = &corpus.Embedder{Model: d.model, Embed: d.embed, Parallel: d.parallel,
			Fatal: func(err error) bool { return llm.IsUnreachable(err) || llm.IsModelMissing(err) }}
	}
	res, err := corpus.ImportLibrary(ctx, opt, lib)
	if err != nil && !errors.Is(err, corpus.ErrInterrupted) {
		return err
	}
	noted := ""
	if notes > 0 {
		noted = "; " + textkit.Plural(notes, "note", "notes") + " above"
	}
	fmt.Fprintf(out, "%d added, %d updated, %d unchanged, %d skipped, %d removed%s; library %s: %s\n",
		res.Added, res.Updated, res.Unchanged, res.Skipped+skipped, res.Removed, noted, textkit.StripControls(lib.Name), textkit.Plural(res.Added+res.Updated+res.Unchanged, "item", "items"))
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

func libraryList(cfg *Config, out, errOut io.Writer, asJSON, withTags bool) error {
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
	// Within a library: its collections in order of their paths (a
	// sub-collection under its parent), then its tags, alphabetically and
	// summed up unless --tags asks for them (a library has hundreds).
	for start := 0; start < len(cols); {
		end := start + 1
		for end < len(cols) && cols[end].Library == cols[start].Library && cols[end].Kind != "library" {
			end++
		}
		run := cols[start:end] // a library and what is in it (Collections lists them together)
		if len(run) > 1 && run[0].Kind == "library" {
			run = run[1:]
		}
		sort.SliceStable(run, func(i, j int) bool {
			if run[i].Kind != run[j].Kind {
				return run[i].Kind == "collection"
			}
			return strings.ToLower(run[i].Name) < strings.ToLower(run[j].Name)
		})
		start = end
	}
	tags := map[string]int{}
	for _, c := range cols {
		if c.Kind == "tag" {
			tags[c.Library]++
		}
	}
	for i, c := range cols {
		indent, what := "", c.Kind
		switch c.Kind {
		case "library":
			if l := m.Libraries[c.Library]; l != nil {
				what = "library · " + l.Kind + " · imported " + l.Imported.Local().Format("2006-01-02 15:04")
			}
		case "collection":
			indent = "  " + strings.Repeat("  ", strings.Count(c.Name, "/"))
		case "tag":
			if !withTags {
				if i+1 == len(cols) || cols[i+1].Kind != "tag" || cols[i+1].Library != c.Library {
					fmt.Fprintf(out, "  %s (`researchtui library list --tags` lists them)\n", textkit.Plural(tags[c.Library], "tag", "tags"))
				}
				continue
			}
			indent = "  " // a tag is one word, whatever its slashes
		case "corpus":
			what = "loose documents of `corpus add`"
		}
		fmt.Fprintf(out, "%s%-40s %11s, %d with files · %s\n", indent, textkit.StripControls(textkit.Clip(c.Name, 40)), textkit.Plural(c.Items, "item", "items"), c.Files, what)
		if c.Kind == "library" && c.Source != "" {
			fmt.Fprintf(out, "  from %s\n", textkit.StripControls(c.Source))
		}
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
		return fmt.Errorf("%w: no collection %s: nothing is imported (`researchtui library import`)", runopts.ErrBadInput, textkit.StripControls(strings.Join(unknown, ", ")))
	}
	return fmt.Errorf("%w: no collection %s (there are: %s)", runopts.ErrBadInput, textkit.StripControls(strings.Join(unknown, ", ")), textkit.StripControls(textkit.Clip(strings.Join(known, ", "), 300)))
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
