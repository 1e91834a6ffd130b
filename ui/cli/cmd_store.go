package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// storeCommand looks after the local store: what it holds and what it
// costs on disk (stats), and giving space back (compact). Both need the
// store to themselves: while another researchtui holds it they say so and
// exit with code 4.
func storeCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "store",
		Short: "Sizes of the local store and its vector indexes; compaction",
	}
	var asJSON bool
	stats := &cobra.Command{
		Use:   "stats",
		Short: "What the store holds: sessions, sources, chunks, embeddings per model, file sizes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(own, func(_ *Config, st *store.Store) error { return showStats(cmd, st, asJSON) })
		},
	}
	stats.Flags().BoolVar(&asJSON, "json", false, "print the figures as one JSON object")
	compact := &cobra.Command{
		Use:   "compact",
		Short: "Give unused space back: prune embeddings no chunk uses, rewrite the database and the vector indexes",
		Long: `compact deletes cached embeddings that no stored chunk uses (query and abstract
embeddings, vectors of text that was replaced), copies the database into a new,
dense file that atomically replaces the old one, and brings every vector index up
to date (finishing its graph) and rewrites it without removed vectors.
Nothing a session needs is removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(own, func(_ *Config, st *store.Store) error { return compactStore(cmd, st) })
		},
	}
	c.AddCommand(stats, compact)
	return c
}

func showStats(cmd *cobra.Command, st *store.Store, asJSON bool) error {
	s, err := st.Stats()
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	printStats(cmd.OutOrStdout(), s)
	return nil
}

func compactStore(cmd *cobra.Command, st *store.Store) error {
	bar := newProgressLine(cmd.ErrOrStderr())
	res, err := st.Compact(cmd.Context(), bar.step)
	bar.done()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "database %s → %s", humanBytes(res.BytesBefore), humanBytes(res.BytesAfter))
	fmt.Fprintf(out, "; %s unused embeddings pruned\n", commas(res.Pruned))
	for _, m := range res.Indexes {
		fmt.Fprintf(out, "vector index of %s up to date\n", textkit.StripControls(m))
	}
	for _, m := range res.RemovedIndexes {
		fmt.Fprintf(out, "vector index of %s removed (no embeddings of that model are left)\n", textkit.StripControls(m))
	}
	return nil
}

func printStats(w io.Writer, s store.Stats) {
	fmt.Fprintf(w, "database    %s\n", s.Path)
	fmt.Fprintf(w, "            %s on disk", humanBytes(s.FileBytes))
	if s.FreeBytes > 0 {
		fmt.Fprintf(w, ", %s of it free", humanBytes(s.FreeBytes))
		// bbolt always keeps a few free pages; compaction is worth
		// suggesting only when it would give back a tenth of the file.
		if s.FreeBytes*10 >= s.FileBytes {
			fmt.Fprint(w, " (researchtui store compact gives it back)")
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "sessions    %s\n", commas(s.Sessions))
	fmt.Fprintf(w, "sources     %s (%s with full text)\n", commas(s.Sources), commas(s.Documents))
	fmt.Fprintf(w, "chunks      %s\n", commas(s.Chunks))
	if len(s.Embeddings) == 0 {
		fmt.Fprintln(w, "embeddings  none yet")
	} else {
		fmt.Fprintln(w, "embeddings")
		for _, e := range s.Embeddings {
			fmt.Fprintf(w, "  %-26s %9s × %d-d  %9s", textkit.StripControls(e.Model), commas(e.Count), e.Dim, humanBytes(e.Bytes))
			if e.Unused > 0 {
				fmt.Fprintf(w, "  (%s used by no chunk)", commas(e.Unused))
			}
			fmt.Fprintln(w)
		}
	}
	if len(s.Indexes) == 0 {
		fmt.Fprintln(w, "vector indexes  none yet (built the first time a run or a search needs one)")
		return
	}
	fmt.Fprintln(w, "vector indexes")
	for _, ix := range s.Indexes {
		fmt.Fprintf(w, "  %-26s %s\n", textkit.StripControls(ix.Model), indexLine(ix))
		fmt.Fprintf(w, "  %-26s %s, %s\n", "", filepath.Base(ix.File), humanBytes(ix.Bytes))
	}
}

func indexLine(ix store.IndexFileStats) string {
	if ix.Problem != "" {
		return "unusable (" + textkit.StripControls(ix.Problem) + "); rebuilt from the store when next needed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s vectors of %d-d, ", commas(ix.Vectors), ix.Dim)
	switch {
	case !ix.Graph:
		b.WriteString("searched exactly")
	case ix.Linked == ix.Vectors:
		b.WriteString("HNSW graph")
	default:
		fmt.Fprintf(&b, "HNSW graph %d%% built (continues when next opened)", 100*ix.Linked/max(ix.Vectors, 1))
	}
	fmt.Fprintf(&b, ", saved %s", ix.Saved.Local().Format("2006-01-02 15:04"))
	if !ix.Fresh {
		b.WriteString(", behind the store (caught up when next opened)")
	}
	return b.String()
}
