package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// The local corpus (corpus): `corpus add` indexes documents, `corpus
// list` lists them. This file parses the flags, wires the store and the
// embedding model in, and prints what the corpus package reports.

func corpusCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "corpus",
		Short: "Index local documents (pdf, md, txt, html) as a source",
		Long: `The local corpus is your own documents as one more source ("local" in --sources).
corpus add reads pdf, md, txt and html files (folders are walked); re-adding skips
unchanged files, re-indexes changed ones and drops files that no longer exist.`,
	}
	add := &cobra.Command{
		Use:   "add PATH...",
		Short: "Index documents and folders",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(own, func(cfg *Config, st *store.Store) error {
				return corpusAdd(cmd.Context(), cfg, embedDeps(cmd, cfg, st), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List indexed documents",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			return corpusList(cfg, cmd.OutOrStdout(), asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "one JSON object per document and line")
	c.AddCommand(add, list)
	return c
}

// corpusDeps is what corpus add works with: the store, and the embedding
// model when there is a backend (embed nil: the text is indexed and the next
// run embeds it).
type corpusDeps struct {
	st       *store.Store
	model    string
	embed    func(context.Context, []string) ([][]float32, error)
	parallel int // embedding requests in flight
}

func corpusAdd(ctx context.Context, cfg *Config, d corpusDeps, args []string, out, errOut io.Writer) error {
	return corpusAddReport(ctx, cfg, d, args, out, errOut, nil)
}

// corpusAddReport is corpusAdd; report, if set, gets the figures when the
// work is done (benchmarks).
func corpusAddReport(ctx context.Context, cfg *Config, d corpusDeps, args []string, out, errOut io.Writer, report func(corpus.Progress)) error {
	opt := corpus.Options{
		Manifest: cfg.corpusPath(),
		Store:    d.st,
		// A file name can hold an escape sequence as easily as a web page can.
		File:  func(verb, path, detail string) { printOutcome(out, verb, path, detail) },
		Watch: func(progress func() corpus.Progress) func() { return showIngestProgress(errOut, progress) },
	}
	if d.embed != nil {
		opt.Embedder = &corpus.Embedder{Model: d.model, Embed: d.embed, Parallel: d.parallel,
			Fatal: func(err error) bool { return llm.IsUnreachable(err) || llm.IsModelMissing(err) }}
	}
	res, err := corpus.Add(ctx, opt, args)
	if report != nil {
		report(res.Progress)
	}
	var notFound *corpus.NotFoundError
	if err != nil && !errors.Is(err, corpus.ErrInterrupted) && !errors.As(err, &notFound) {
		return err
	}
	fmt.Fprintf(out, "%d added, %d updated, %d unchanged, %d skipped, %d removed; %d documents in the corpus\n",
		res.Added, res.Updated, res.Unchanged, res.Skipped, res.Removed, res.Documents)
	if res.Embedded != nil {
		fmt.Fprint(out, embeddingNote(res.Embedded, res.Progress, errors.Is(err, corpus.ErrInterrupted)))
	}
	if errors.Is(err, corpus.ErrInterrupted) {
		return &exitError{exitCancelled, err}
	}
	if res.Added+res.Updated > 0 {
		fmt.Fprintln(out, "they are searched when a run's --sources include local")
	}
	if notFound != nil {
		return &exitError{exitUsage, err}
	}
	return nil
}

// embeddingNote is the summary of embedding: how many chunks, where the
// time went, the vector index, and what was not embedded and why.
func embeddingNote(o *corpus.EmbedOutcome, p corpus.Progress, interrupted bool) string {
	n, missed := p.ChunksEmbedded, p.ChunksNotEmbedded
	var out string
	if n > 0 {
		el := time.Since(p.Start)
		out = fmt.Sprintf("embedded %s chunks with %s in %s (%.0f chunks/s)\n", commas(int(n)), o.Model, el.Round(100*time.Millisecond), float64(n)/el.Seconds())
		out += fmt.Sprintf("time: reading %s (on %d cores), committing %s, embedding %s (%d requests in flight), committing vectors %s, vector index %s\n",
			secs(p.Read), runtime.GOMAXPROCS(0), secs(p.Commit), secs(p.Embed), o.Parallel, secs(p.VecStore), secs(p.IndexTime))
	}
	if st := o.Index; st != nil {
		how := "searched exactly (it is small)"
		switch {
		case st.Graph && st.Linked >= st.Nodes:
			how = "HNSW graph complete"
		case st.Graph:
			how = fmt.Sprintf("HNSW graph %d%% built; the rest is linked when the index is next opened", 100*st.Linked/max(st.Nodes, 1))
		}
		out += fmt.Sprintf("vector index of %s: %s vectors, %s\n", textkit.StripControls(o.Model), commas(st.Vectors), how)
	}
	switch {
	case o.Fatal != nil:
		out += fmt.Sprintf("not embedded: %s; the next run embeds them (see `researchtui doctor`)\n", strings.TrimRight(textkit.StripControls(o.Fatal.Error()), ".;"))
	case missed > 0 && !interrupted:
		reason := "the embedding requests failed"
		if o.Failed != nil {
			reason = textkit.StripControls(o.Failed.Error())
		}
		out += fmt.Sprintf("%s chunks not embedded (%s); the next run tries again\n", commas(int(missed)), reason)
	}
	return out
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// showIngestProgress redraws the progress line on a terminal until the
// function it returns is called.
func showIngestProgress(w io.Writer, progress func() corpus.Progress) (stop func()) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	stop = func() { close(done); wg.Wait() }
	f, ok := w.(*os.File)
	if !ok {
		return stop
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return stop
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[2K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r\x1b[2K%s", ingestLine(progress()))
			}
		}
	}()
	return stop
}

func ingestLine(s corpus.Progress) string {
	el := time.Since(s.Start)
	embedded := s.ChunksEmbedded
	line := fmt.Sprintf("files %s/%s · chunks %s stored, %s embedded", commas(int(s.FilesDone)), commas(int(s.Files)),
		commas(int(s.ChunksStored)), commas(int(embedded)))
	if embedded > 0 && el > time.Second {
		line += fmt.Sprintf(" · %.0f chunks/s", float64(embedded)/el.Seconds())
	}
	if eta := ingestETA(s, el); eta > 0 {
		line += " · ETA " + eta.Round(time.Second).String()
	}
	if st := s.Index; st != nil && st.Phase != "" && st.Total > 0 {
		line += fmt.Sprintf(" · vector index: %s %d%%", st.Phase, 100*st.Done/st.Total)
	}
	return line
}

// ingestETA is the longer of what reading and embedding still need: reading
// by the bytes left, embedding by the chunks waiting plus those the unread
// bytes will make, at the rates so far.
func ingestETA(s corpus.Progress, el time.Duration) time.Duration {
	total, done := float64(s.Bytes), float64(s.BytesDone)
	if done <= 0 || el < 2*time.Second {
		return 0
	}
	read := time.Duration(float64(el) * (total - done) / done)
	embedded := float64(s.ChunksEmbedded)
	if embedded == 0 {
		return read
	}
	perByte := float64(s.ChunksToEmbed) / done
	waiting := float64(s.ChunksToEmbed) - embedded - float64(s.ChunksNotEmbedded) + perByte*(total-done)
	embed := time.Duration(float64(el) * waiting / embedded)
	return max(read, embed)
}

func corpusList(cfg *Config, out io.Writer, asJSON bool) error {
	m, err := corpus.LoadManifest(cfg.corpusPath())
	if err != nil {
		return err
	}
	entries := m.Entries()
	if asJSON {
		return jsonLines(out, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(out, "the corpus is empty; add documents with `researchtui corpus add PATH...`")
		return nil
	}
	for _, e := range entries {
		size := textkit.Plural(e.Chunks, "chunk", "chunks")
		if e.Pages > 0 {
			size = textkit.Plural(e.Pages, "page", "pages") + ", " + size
		}
		fmt.Fprintf(out, "%s\n    %s · %s · indexed %s\n", textkit.StripControls(textkit.Clip(e.Title, 100)), textkit.StripControls(e.Path), size, e.Indexed.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(out, "%d documents\n", len(entries))
	return nil
}
