package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/search/zotero"
	"github.com/researchtui/researchtui/textkit"
)

// importFlags are library import's flags.
type importFlags struct {
	name    string // a file's collection name
	replace bool   // a file may replace another file's library of the same name
	// encoding is the files' encoding when it is not UTF-8 ("" detects it)
	encoding string
	dataDir  string // Zotero's data folder
	api      string // Zotero's local API
	useAPI   bool
	baseDir  string // Zotero's base folder of linked attachments
	// attachmentsFrom are folders, besides the library's own, whose
	// files its attachments may be.
	attachmentsFrom []string
}

// attachmentDirs are the folders a library's attachments may be read from
// besides its own: where Zotero stores files (its storage, its base folder
// of linked files; Better BibTeX exports name files there) and those given
// with --attachments-from.
func (f *importFlags) attachmentDirs(zoteroDataDir string) []string {
	if zoteroDataDir == "" {
		zoteroDataDir = zotero.DefaultDataDir()
	}
	dirs := []string{filepath.Join(zoteroDataDir, "storage")}
	if f.baseDir != "" {
		dirs = append(dirs, f.baseDir)
	}
	return append(dirs, f.attachmentsFrom...)
}

func (f *importFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "the collection a file's items are in (default: the file's name)")
	fl.StringVar(&f.encoding, "encoding", "", "the files' encoding when they are not UTF-8 and detection gets it wrong: latin1, cp1252, latin2, cp1250 or latin9")
	fl.BoolVar(&f.replace, "replace", false, "take over a library name another file holds, replacing that library (by default the file becomes a library of its own)")
	fl.StringVar(&f.dataDir, "data-dir", "", "Zotero's data folder, holding zotero.sqlite and storage/ (default ~/Zotero)")
	fl.BoolVar(&f.useAPI, "api", false, "read Zotero through its local API (Zotero 7 running, with Settings → Advanced → \"Allow other applications on this computer to communicate with Zotero\")")
	fl.StringVar(&f.api, "api-url", zotero.DefaultBase, "the address of Zotero's local API")
	fl.StringVar(&f.baseDir, "base-dir", "", "Zotero's base folder for linked attachments (Settings → Files and Folders), when it has one")
	fl.StringArrayVar(&f.attachmentsFrom, "attachments-from", nil, "a folder whose files the library's attachments may be, besides the library's own folder and Zotero's storage (repeatable); attachments elsewhere are not read")
}

// importZotero imports the Zotero library: from its database when Zotero
// is closed, else (or with --api) through its local API. The database is
// only ever read.
func importZotero(ctx context.Context, cfg *Config, d corpusDeps, f *importFlags, out, errOut io.Writer) error {
	dataDir := f.dataDir
	if dataDir == "" {
		dataDir = zotero.DefaultDataDir()
	}
	var lib zotero.Library
	kind, origin := "zotero", dataDir
	useAPI := f.useAPI
	if !useAPI {
		var err error
		lib, err = zotero.ReadDatabaseWith(ctx, dataDir, zotero.DatabaseOptions{BaseDir: f.baseDir})
		switch {
		case errors.Is(err, zotero.ErrLocked):
			fmt.Fprintf(errOut, "%s\nreading it through Zotero's local API at %s instead\n", textkit.StripControls(err.Error()), textkit.StripControls(f.api))
			useAPI = true
		case err != nil:
			return err
		}
	}
	if useAPI {
		kind, origin = "zotero-api", f.api
		since := 0
		if m, err := corpus.LoadManifest(cfg.corpusPath()); err == nil {
			if l := m.Libraries["zotero"]; l != nil && l.Kind == kind && l.Origin == origin {
				since = l.Version
			}
		}
		api := &zotero.API{Base: f.api, Client: &http.Client{Timeout: 2 * time.Minute}, BaseDir: f.baseDir}
		got, unchanged, err := api.Library(ctx, since)
		if errors.Is(err, zotero.ErrNotRunning) && !f.useAPI {
			// Zotero runs (it holds the database), but its API is off.
			return errors.New("Zotero holds its database and its local API does not answer: turn the API on (Zotero 7: Settings → Advanced → Allow other applications on this computer to communicate with Zotero), or close Zotero, then import again")
		}
		if err != nil {
			return err
		}
		if unchanged {
			fmt.Fprintf(out, "the Zotero library is unchanged since version %d: nothing to do\n", since)
			return nil
		}
		lib = got
	}
	cl := corpus.Library{Name: "zotero", Kind: kind, Origin: origin, Version: lib.Version, Items: lib.Items, AttachmentDirs: f.attachmentDirs(dataDir)}
	cl.Collections = collectionPaths(lib.Collections)
	return runImport(ctx, cfg, d, cl, nil, out, errOut)
}

// collectionPaths name Zotero's collections as their items' Collections
// do: "Parent/Child".
func collectionPaths(cols []zotero.Collection) []string {
	byKey := map[string]zotero.Collection{}
	for _, c := range cols {
		byKey[c.Key] = c
	}
	var out []string
	for _, c := range cols {
		path := c.Name
		seen := map[string]bool{c.Key: true}
		for p := byKey[c.Parent]; p.Key != "" && !seen[p.Key]; p = byKey[p.Parent] {
			seen[p.Key] = true
			path = p.Name + "/" + path
		}
		out = append(out, path)
	}
	return out
}
