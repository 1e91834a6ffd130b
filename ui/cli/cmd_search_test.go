package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

// researchtui search never trusts the vector index file blindly: a damaged
// file and a missing one are rebuilt from the store, the search answers
// exactly as before and says what happened, and the rebuilt file is saved,
// so the next search says nothing.
func TestSearchRebuildsADamagedOrMissingIndex(t *testing.T) {
	t.Parallel()
	c, _ := modelCLI(t, ollamafake.Options{})
	dir := libraryFolder(t, c.dir, 30, 400)
	if out, stderr, code, _ := c.run("corpus", "add", dir); code != 0 {
		t.Fatalf("corpus add: exit %d\n%s\n%s", code, out, stderr)
	}
	search := func() (string, string) {
		t.Helper()
		out, stderr, code, _ := c.run("search", "--json", "-k", "5", "anisotropic gap node quasiparticle")
		if code != 0 {
			t.Fatalf("search: exit %d\n%s", code, stderr)
		}
		return out, stderr
	}
	want, stderr := search()
	if strings.Count(want, "\n") != 5 || strings.Contains(stderr, "vector index") {
		t.Fatalf("search on a sound index:\n%s\nstderr: %s", want, stderr)
	}
	st := storeStats(t, c)
	if len(st.Indexes) != 1 || st.Indexes[0].Problem != "" {
		t.Fatalf("index files: %+v", st.Indexes)
	}
	file := st.Indexes[0].File

	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	raw[4096+10] ^= 0xff // a vector: the header is sound, the first section's checksum is not
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	got, stderr := search()
	if got != want || !strings.Contains(stderr, "vector index of nomic-embed-text: rebuilt from the store") || !strings.Contains(stderr, "checksum") {
		t.Fatalf("search on a damaged index:\n%s\nstderr: %s\nwant:\n%s", got, stderr, want)
	}
	if f := storeStats(t, c).Indexes[0]; f.Problem != "" || !f.Fresh || f.Vectors != st.Indexes[0].Vectors {
		t.Fatalf("index file after the rebuild: %+v", f)
	}

	os.Remove(file)
	got, stderr = search()
	if got != want || !strings.Contains(stderr, "there was no index file") {
		t.Fatalf("search without an index file:\n%s\nstderr: %s", got, stderr)
	}
	if got, stderr = search(); got != want || stderr != "" {
		t.Fatalf("search after the rebuild was saved:\n%s\nstderr: %s", got, stderr)
	}
}
