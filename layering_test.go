package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/researchtui/researchtui"

// TestImportsGoDown checks the dependency rule of ARCHITECTURE.md §2 on
// every non-test Go file: it fails, naming the import, when one runs the
// wrong way.
func TestImportsGoDown(t *testing.T) {
	imports := projectImports(t)
	if len(imports) < 10 {
		t.Fatalf("found %d packages: the walk missed the project", len(imports))
	}
	var bad []string
	for p, qs := range imports {
		for q := range qs {
			if why := breaks(p, q); why != "" {
				bad = append(bad, p+" imports "+q+": "+why)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestTheRuleCatchesWrongImports: the rule is not vacuous.
func TestTheRuleCatchesWrongImports(t *testing.T) {
	for _, c := range [][2]string{
		{"textkit", "search"}, {"llm", "store"}, {"search", "store"}, {"store/vector", "store"},
		{"pipeline", "pipeline/history"}, {"corpus", "pipeline"}, {"corpus", "llm"}, {"pipeline", "corpus"},
		{"ui/mcp", "pipeline/eval"}, {"pipeline", "ui"}, {"ui/mcp", "ui"}, {"pipeline", "charm.land/bubbletea/v2"},
		{"pipeline/report", "pipeline"}, {"pipeline/report", "store"}, {"pipeline/report", "llm"}, {"pipeline", "pipeline/eval"},
		{"pipeline/runopts", "pipeline"}, {"pipeline/runopts", "pipeline/report"}, {"pipeline/runopts", "store"},
		{"search/replay", "search"}, {"search/replay", "search/sourcefake"}, {"pipeline/eval", "search/sourcefake"}, {"ui/cli", "search/sourcefake"}, {"search", "search/sourcefake"},
	} {
		if breaks(c[0], c[1]) == "" {
			t.Errorf("%s importing %s passes the rule", c[0], c[1])
		}
	}
	for _, c := range [][2]string{
		{"search", "search/bib"}, {"search", "textkit"}, {"pipeline/history", "pipeline"}, {"ui/cli", "corpus"}, {"corpus", "search/bib"}, {"corpus", "store"},
		{"ui/cli", "pipeline/eval"}, {"", "ui/cli"}, {"ui/cli", "ui"}, {"ui", "charm.land/bubbletea/v2"},
		{"pipeline", "pipeline/report"}, {"pipeline/history", "pipeline/report"}, {"pipeline/report", "search"}, {"pipeline/report", "textkit"},
		{"pipeline", "pipeline/runopts"}, {"ui/cli", "pipeline/runopts"}, {"pipeline/runopts", "search"},
		{"search/sourcefake", "search/replay"}, {"pipeline/eval", "search/replay"}, {"search/replay", "textkit"},
		{"pipeline/pipelinetest", "search/sourcefake"}, {"tools/fakeserve", "search/sourcefake"},
	} {
		if why := breaks(c[0], c[1]); why != "" {
			t.Errorf("%s importing %s is refused: %s", c[0], c[1], why)
		}
	}
}

// breaks says why package p (a path in the module, "" for main) may not
// import q (a path in the module, or Bubble Tea's); "" when it may.
func breaks(p, q string) string {
	if strings.HasPrefix(q, "charm.land/bubbletea") {
		if p != "ui" && p != "ui/cli" {
			return "only ui and ui/cli import Bubble Tea"
		}
		return ""
	}
	t, u := tree(p), tree(q)
	switch {
	case (t == "safefile" || t == "textkit") && u != t:
		return "the leaves import nothing of the project"
	case (t == "llm" || t == "search" || t == "store" || t == "themes") && u != t && u != "safefile" && u != "textkit":
		return "llm, search, store and themes import only their own tree and the leaves"
	case strings.HasPrefix(p, "search/replay") && !strings.HasPrefix(q, "search/replay") && u != "safefile" && u != "textkit":
		return "search/replay (recorded answers served for the eval and the tests) imports only the leaves"
	case q == "search/sourcefake" && p != "search/sourcefake" && p != "pipeline/pipelinetest" && tree(p) != "tools":
		return "search/sourcefake is the tests' fake: only tests, pipeline/pipelinetest and tools import it (the eval replays its own recordings through search/replay)"
	case strings.HasPrefix(p, "store/vector") && !strings.HasPrefix(q, "store/vector"):
		return "store/vector imports nothing"
	case strings.HasPrefix(p, "pipeline/report") && !strings.HasPrefix(q, "pipeline/report") && u != "search" && u != "safefile" && u != "textkit":
		return "pipeline/report imports nothing of the orchestrator: only search and the leaves"
	case strings.HasPrefix(p, "pipeline/runopts") && !strings.HasPrefix(q, "pipeline/runopts") && u != "search" && u != "safefile" && u != "textkit":
		return "pipeline/runopts (a run's options) imports only search and the leaves"
	case p == "pipeline" && u == "pipeline" && q != "pipeline" && q != "pipeline/report" && q != "pipeline/runopts":
		return "pipeline never imports a package under it but its leaves pipeline/report and pipeline/runopts"
	case t == "corpus" && u != t && u != "search" && u != "store" && u != "safefile" && u != "textkit":
		return "corpus (ingestion) imports only search, store and the leaves"
	case q == "corpus" && p != "ui/cli":
		return "only ui/cli imports corpus"
	case q == "pipeline/eval" && p != "ui/cli" && p != "pipeline/eval":
		return "only ui/cli imports pipeline/eval"
	case u == "ui" && p != "" && p != "ui/cli":
		return "nothing imports a face but main and ui/cli"
	}
	return ""
}

// tree is the first element of a path in the module.
func tree(p string) string {
	first, _, _ := strings.Cut(p, "/")
	return first
}

// projectImports maps each package of the module (by its path in the
// module) to what its non-test files import of the module (by path in it)
// and of Bubble Tea; the rest (the standard library, other libraries) is
// left out.
func projectImports(t *testing.T) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, spec := range f.Imports {
			q, _ := strconv.Unquote(spec.Path.Value)
			switch {
			case q == module || strings.HasPrefix(q, module+"/"):
				out[pkg][strings.TrimPrefix(strings.TrimPrefix(q, module), "/")] = true
			case strings.HasPrefix(q, "charm.land/bubbletea"):
				out[pkg][q] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
