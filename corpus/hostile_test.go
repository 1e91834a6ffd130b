package corpus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/store"
)

// keepingStore is a memStore that also keeps every document's pages, so
// a test can see all the text an import stored.
type keepingStore struct {
	*memStore
	mu   sync.Mutex
	docs [][]byte
}

func (k *keepingStore) PutSourceBatch(items []store.SourceBatch) error {
	k.mu.Lock()
	for _, it := range items {
		k.docs = append(k.docs, it.Document)
	}
	k.mu.Unlock()
	return k.memStore.PutSourceBatch(items)
}

// stored is everything the import put in the store: records, chunks and
// documents.
func (k *keepingStore) stored() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.memStore.mu.Lock()
	defer k.memStore.mu.Unlock()
	var b strings.Builder
	for _, raw := range k.sources {
		b.Write(raw)
	}
	for _, cs := range k.chunks {
		for _, c := range cs {
			b.WriteString(c.Text)
		}
	}
	for _, d := range k.docs {
		b.Write(d)
	}
	return b.String()
}

// A shared library folder with a hostile refs.bib: its attachments are
// links to /etc/passwd, /proc/self/environ, /dev/zero, a file and a folder
// outside, a link loop, a FIFO, paths climbing out with "..", a 2 GB sparse
// PDF. The import finishes in bounded time, stores nothing from outside
// the folder (no line of /etc/passwd, no variable of the environment, no
// outside file), reports each skip with its reason, and keeps every item
// as a title and abstract record; a link that stays inside the folder and
// a file the library names by its absolute path elsewhere are read.
func TestHostileLibraryFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and FIFOs")
	}
	secretEnv := "RESEARCHTUI_TEST_API_KEY_" + fmt.Sprint(time.Now().UnixNano())
	t.Setenv("RESEARCHTUI_TEST_API_KEY", secretEnv)
	lib := t.TempDir()
	outside := t.TempDir()
	elsewhere := t.TempDir() // where a library names a file by its absolute path
	secret := "OUTSIDE_SECRET_" + fmt.Sprint(time.Now().UnixNano())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret+" words"), 0o600))
	must(os.WriteFile(filepath.Join(outside, "secret.pdf"), []byte("%PDF-1.4 "+secret), 0o600))
	must(os.MkdirAll(filepath.Join(lib, "papers"), 0o755))
	must(os.WriteFile(filepath.Join(lib, "papers", "real.md"), []byte("# Lattice notes\n\nPhonons on a Bethe lattice.\n"), 0o644))
	must(os.WriteFile(filepath.Join(elsewhere, "linked.md"), []byte("# Linked\n\nSpin liquids on the honeycomb lattice.\n"), 0o644))
	for name, target := range map[string]string{
		"passwd.txt":      "/etc/passwd",
		"environ.txt":     "/proc/self/environ",
		"zero.pdf":        "/dev/zero",
		"outside.txt":     filepath.Join(outside, "secret.txt"),
		"outdir":          outside,
		"loop-a.txt":      "loop-b.txt",
		"loop-b.txt":      "loop-a.txt",
		"papers/alias.md": "real.md", // inside: followed
	} {
		must(os.Symlink(target, filepath.Join(lib, name)))
	}
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(elsewhere, "link.txt")))
	must(os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(lib, "hard.txt")))
	must(syscall.Mkfifo(filepath.Join(lib, "fifo.pdf"), 0o644))
	big, err := os.Create(filepath.Join(lib, "big.pdf"))
	must(err)
	must(big.Truncate(2 << 30)) // sparse: nothing is written
	big.Close()

	out := filepath.Base(outside)
	entries := []struct{ id, file, why string }{
		{"passwd", "passwd.txt", "attachment passwd.txt skipped: it is a symlink to outside the library folder"},
		{"environ", "environ.txt", "attachment environ.txt skipped: it is a symlink to outside the library folder"},
		{"zero", "zero.pdf", "attachment zero.pdf skipped: it is a symlink to outside the library folder"},
		{"outside", "outside.txt", "attachment outside.txt skipped: it is a symlink to outside the library folder"},
		{"outdir", "outdir/secret.txt", "attachment secret.txt skipped: it is a symlink to outside the library folder"},
		{"loop", "loop-a.txt", "attachment loop-a.txt skipped: it is a symlink loop"},
		{"fifo", "fifo.pdf", "attachment fifo.pdf skipped: it is not a regular file: a named pipe (FIFO)"},
		{"dotdot", "../" + out + "/secret.txt", `attachment secret.txt skipped: it is named by a path that climbs out of the library folder ("..")`},
		{"dotdotpdf", "papers/../../" + out + "/secret.pdf", `attachment secret.pdf skipped: it is named by a path that climbs out of the library folder ("..")`},
		{"big", "big.pdf", "attachment big.pdf skipped: it is 2.0 GB, over the 200 MB limit"},
		{"elselink", filepath.Join(elsewhere, "link.txt"), "attachment link.txt skipped: it is a symlink to outside its folder"},
		{"absolute", filepath.Join(outside, "secret.txt"), "attachment secret.txt skipped: it is outside the library's folders (to read it, import again with --attachments-from " + outside + ")"},
		{"fileurl", "file://" + filepath.Join(outside, "secret.txt"), "attachment secret.txt skipped: it is outside the library's folders (to read it, import again with --attachments-from " + outside + ")"},
		{"hardlink", "hard.txt", "attachment hard.txt skipped: it is a hard link: the same file has another name, which may be outside the library's folders"},
		{"missing", "papers/gone.pdf", "its file is missing (no such file or directory)"},
		{"real", "papers/real.md", ""},
		{"alias", "papers/alias.md", ""},
		{"linked", filepath.Join(elsewhere, "linked.md"), ""},
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "@article{%s, title = {Item %s}, abstract = {The abstract of %s.}, file = {%s}}\n", e.id, e.id, e.id, e.file)
	}
	bibPath := filepath.Join(lib, "refs.bib")
	must(os.WriteFile(bibPath, []byte(b.String()), 0o644))
	items, problems := bib.Read(bibPath, []byte(b.String()))
	if len(problems) > 0 || len(items) != len(entries) {
		t.Fatalf("%d items, problems %v", len(items), problems)
	}

	st := &keepingStore{memStore: newMemStore()}
	details := map[string]string{}
	var mu sync.Mutex
	opt := corpus.Options{
		Manifest: filepath.Join(t.TempDir(), "corpus.json"),
		Store:    st,
		File: func(verb, title, detail string) {
			mu.Lock()
			defer mu.Unlock()
			details[title] = verb + ": " + detail
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		res corpus.Result
		err error
	}
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		res, err := corpus.ImportLibrary(ctx, opt, corpus.Library{Name: "refs", Kind: bib.Format(bibPath, nil), Origin: bibPath, Items: items,
			AttachmentDirs: []string{elsewhere}}) // as --attachments-from would
		done <- result{res, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("the import of a hostile library folder did not finish in 90 s")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("imported in %s", time.Since(t0).Round(time.Millisecond))
	if r.res.Added != len(entries) || r.res.Skipped != 0 {
		t.Errorf("added %d, skipped %d; want every item added (refused attachments leave title and abstract records)", r.res.Added, r.res.Skipped)
	}
	mu.Lock()
	for _, e := range entries {
		got := details["Item "+e.id]
		t.Logf("%-9s %s", e.id, got)
		switch {
		case e.why == "" && strings.Contains(got, "abstract"):
			t.Errorf("%s: %q, want its file read", e.id, got)
		case e.why != "" && !strings.Contains(got, e.why+"; read from its abstract"):
			t.Errorf("%s: %q, want %q", e.id, got, e.why)
		}
	}
	mu.Unlock()

	all := st.stored()
	manifest, _ := os.ReadFile(opt.Manifest)
	for what, leak := range map[string]string{
		"a line of /etc/passwd":          "root:x:0:0",
		"the environment":                secretEnv,
		"the environment's PATH":         "PATH=",
		"a file outside the folder":      secret,
		"the outside folder's path":      outside + "/secret",
		"the /dev/zero link's nul bytes": "\x00\x00\x00\x00",
	} {
		if strings.Contains(all, leak) {
			t.Errorf("the store holds %s", what)
		}
		if strings.Contains(string(manifest), leak) {
			t.Errorf("the manifest holds %s", what)
		}
	}
	for _, want := range []string{"Phonons on a Bethe lattice", "Spin liquids on the honeycomb"} {
		if !strings.Contains(all, want) {
			t.Errorf("the store lacks %q", want)
		}
	}
	var m struct {
		Items map[string]corpus.ItemEntry `json:"items"`
	}
	if err := json.Unmarshal(manifest, &m); err == nil {
		for _, e := range m.Items {
			if e.File != "" && !strings.HasPrefix(e.File, lib) && !strings.HasPrefix(e.File, elsewhere) {
				t.Errorf("%s: file %s", e.ID, e.File)
			}
		}
	}

	// A second import says again why each attachment is not read.
	clear(details)
	if _, err := corpus.ImportLibrary(ctx, opt, corpus.Library{Name: "refs", Kind: "bibtex", Origin: bibPath, Items: items}); err != nil {
		t.Fatal(err)
	}
	if got := details["Item fifo"]; !strings.HasPrefix(got, "unchanged: ") || !strings.Contains(got, "named pipe") {
		t.Errorf("re-import: fifo: %q", got)
	}
}
