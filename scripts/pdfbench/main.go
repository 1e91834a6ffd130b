// Command pdfbench measures PDF text extraction on a folder of real PDFs:
// word-bag F1 against poppler's pdftotext (when installed), pages per
// second, CPU time, the slowest documents and the failures, for the
// extractor of the working tree ("new") and, with -old REV, the extractor
// of an older git revision side by side.
//
//	go run ./scripts/pdfbench -dir /tmp/tlpub/root -old 92821a7
//
// The new extractor is scripts/pdfbench/helper built from the working tree
// and run as one process for all documents (as in a run: the reader starts
// once, timed apart, cold with an empty compilation cache and then warm).
// The old one is the same helper copied into a temporary git worktree of
// REV and built there; it runs one process per document, so an abandoned
// extraction cannot keep burning CPU under the next one. CPU is the
// children's user+system time. Documents are read one at a time.
//
// F1 counts words of at least 3 letters (NFC, lower case) as a bag: the
// reference is pdftotext's text, as is and, in a second column, cleaned
// like the new extractor's (CleanPDFPages: hyphens joined, running heads
// and page numbers removed), which the raw reference keeps. Only documents
// whose reference has at least -min-words such words are counted.
//
// To get the set the figures in issue 12 were taken on (Debian 12):
//
//	apt-get download texlive-publishers-doc && dpkg-deb -x texlive-publishers-doc_*.deb /tmp/tlpub/root
//	apt-get install poppler-utils
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/search"
	"golang.org/x/text/unicode/norm"
)

type result struct {
	Path   string  `json:"path,omitempty"`
	Pages  int     `json:"pages"`
	Text   string  `json:"text,omitempty"`
	Millis float64 `json:"ms"`
	CPU    float64 `json:"cpu_ms"`
	Err    string  `json:"err,omitempty"`
	Start  bool    `json:"start,omitempty"`
}

type run struct {
	name    string
	results map[string]result
	cpu     time.Duration
	wall    time.Duration
	cold    float64 // ms to start the reader with an empty cache
	warm    float64 // ms with the cache filled
}

func main() {
	dir := flag.String("dir", "", "folder of PDFs (walked)")
	old := flag.String("old", "", "git revision of the old extractor (empty: only the new one)")
	minWords := flag.Int("min-words", 200, "count only documents whose pdftotext text has this many words of ≥3 letters")
	timeout := flag.Duration("timeout", 60*time.Second, "deadline per document, both extractors")
	top := flag.Int("top", 10, "how many slowest and worst documents to list")
	jsonOut := flag.String("json", "", "also write every document's figures to this file")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "pdfbench: -dir is required")
		os.Exit(2)
	}
	root, err := repoRoot()
	check(err)
	tmp, err := os.MkdirTemp("", "pdfbench-")
	check(err)
	defer os.RemoveAll(tmp)

	files := findPDFs(*dir)
	fmt.Printf("%d PDFs under %s\n", len(files), *dir)

	refs := map[string][]string{} // path → reference pages
	if _, err := exec.LookPath("pdftotext"); err == nil {
		refs = pdftotextAll(files)
		var kept []string
		for _, f := range files {
			if p, ok := refs[f]; ok && len(words(strings.Join(p, "\n"))) >= *minWords {
				kept = append(kept, f)
			}
		}
		fmt.Printf("%d with at least %d words (words of ≥3 letters in pdftotext's text)\n", len(kept), *minWords)
		files = kept
	} else {
		fmt.Println("pdftotext not installed: no F1, every PDF counted (apt-get install poppler-utils)")
	}

	newHelper := filepath.Join(tmp, "helper-new")
	check(goBuild(root, newHelper, "pdfbench_new"))
	runs := []*run{}
	if *old != "" {
		oldHelper := filepath.Join(tmp, "helper-old")
		check(buildOld(root, *old, oldHelper, tmp))
		fmt.Printf("old: %s at %s, one process per document\n", "search.PDFPagesWithin", *old)
		r := &run{name: "old " + *old, results: map[string]result{}}
		for i, f := range files {
			res, cpu, wall, err := runHelper(oldHelper, []string{f}, *timeout, nil)
			check(err)
			r.cpu += cpu
			r.wall += wall
			for _, x := range res {
				r.results[x.Path] = x
			}
			if (i+1)%50 == 0 {
				fmt.Fprintf(os.Stderr, "old: %d/%d\n", i+1, len(files))
			}
		}
		runs = append(runs, r)
	}
	{
		cache := filepath.Join(tmp, "wazero-cache")
		env := []string{search.PDFCacheEnv + "=" + cache}
		r := &run{name: "new (pdfium)", results: map[string]result{}}
		for i := range 2 {
			res, _, _, err := runHelper(newHelper, nil, *timeout, env)
			check(err)
			for _, x := range res {
				if x.Start && x.Err != "" {
					check(errors.New("the PDF reader did not start: " + x.Err))
				}
				if x.Start && i == 0 {
					r.cold = x.Millis
				} else if x.Start {
					r.warm = x.Millis
				}
			}
		}
		res, cpu, wall, err := runHelper(newHelper, files, *timeout, env)
		check(err)
		r.cpu, r.wall = cpu, wall
		for _, x := range res {
			if !x.Start {
				r.results[x.Path] = x
			}
		}
		runs = append(runs, r)
	}
	report(os.Stdout, files, refs, runs, *top)
	if *jsonOut != "" {
		writeJSON(*jsonOut, files, refs, runs)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "pdfbench:", err)
		os.Exit(1)
	}
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run pdfbench inside the researchtui module")
	}
	return filepath.Dir(mod), nil
}

func findPDFs(dir string) []string {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".pdf") && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// pdftotextAll runs pdftotext on every file, two at a time.
func pdftotextAll(files []string) map[string][]string {
	refs := map[string][]string{}
	var mu sync.Mutex
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, "pdftotext", "-q", "-enc", "UTF-8", f, "-").Output()
			if err != nil {
				return
			}
			pages := strings.Split(strings.TrimSuffix(string(out), "\f"), "\f")
			mu.Lock()
			refs[f] = pages
			mu.Unlock()
		}()
	}
	wg.Wait()
	return refs
}

func goBuild(dir, out, tags string) error {
	args := []string{"build", "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "./scripts/pdfbench/helper")...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// buildOld builds the helper against REV's search package in a temporary
// git worktree.
func buildOld(root, rev, out, tmp string) error {
	wt := filepath.Join(tmp, "old-worktree")
	add := exec.Command("git", "worktree", "add", "--detach", wt, rev)
	add.Dir = root
	if b, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("git worktree add: %v: %s", err, b)
	}
	defer func() {
		rm := exec.Command("git", "worktree", "remove", "--force", wt)
		rm.Dir = root
		rm.Run()
	}()
	dst := filepath.Join(wt, "scripts", "pdfbench", "helper")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"main.go", "start_old.go"} {
		b, err := os.ReadFile(filepath.Join(root, "scripts", "pdfbench", "helper", name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			return err
		}
	}
	return goBuild(wt, out, "")
}

// runHelper feeds files to one helper process and returns its results, its
// CPU time (user+system) and its wall time.
func runHelper(bin string, files []string, timeout time.Duration, env []string) ([]result, time.Duration, time.Duration, error) {
	cmd := exec.Command(bin, "-timeout", timeout.String())
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n"))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.Discard
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var res []result
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			res = append(res, r)
		}
	}
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		// a crashed helper (the old extractor can take the process down):
		// the files it did not answer count as failures
		done := map[string]bool{}
		for _, r := range res {
			done[r.Path] = true
		}
		for _, f := range files {
			if !done[f] {
				res = append(res, result{Path: f, Err: "helper crashed: " + err.Error()})
			}
		}
	}
	return res, cpu, wall, nil
}

var wordRe = regexp.MustCompile(`[\p{L}\p{M}]+`)

// words are the runs of letters of at least 3 letters, NFKC (so Arabic
// presentation forms, which pdftotext keeps and pdfium maps back to
// letters, compare equal), lower case.
func words(s string) []string {
	var out []string
	for _, w := range wordRe.FindAllString(strings.ToLower(norm.NFKC.String(s)), -1) {
		if n := len([]rune(w)) - countMarks(w); n >= 3 {
			out = append(out, w)
		}
	}
	return out
}

func countMarks(w string) int {
	n := 0
	for _, r := range w {
		if r >= 0x300 && r < 0x370 {
			n++
		}
	}
	return n
}

func f1(ref, got []string) float64 {
	if len(ref) == 0 && len(got) == 0 {
		return 1
	}
	if len(ref) == 0 || len(got) == 0 {
		return 0
	}
	bag := map[string]int{}
	for _, w := range ref {
		bag[w]++
	}
	common := 0
	for _, w := range got {
		if bag[w] > 0 {
			bag[w]--
			common++
		}
	}
	p := float64(common) / float64(len(got))
	r := float64(common) / float64(len(ref))
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

type docScore struct {
	path        string
	f1, f1c     float64
	ms, cpu     float64
	pages       int
	err         string
	refPages    int
	hasRef      bool
	emptyText   bool
	timedOut    bool
	wordsGot    int
	wordsRef    int
	pageCountOK bool
}

func score(files []string, refs map[string][]string, r *run) []docScore {
	var out []docScore
	for _, f := range files {
		x := r.results[f]
		d := docScore{path: f, ms: x.Millis, cpu: x.CPU, pages: x.Pages, err: x.Err}
		d.timedOut = strings.Contains(x.Err, "too long")
		got := words(x.Text)
		d.wordsGot = len(got)
		d.emptyText = x.Err == "" && strings.TrimSpace(x.Text) == ""
		if ref, ok := refs[f]; ok {
			d.hasRef = true
			d.refPages = len(ref)
			d.pageCountOK = x.Err == "" && x.Pages == len(ref)
			rw := words(strings.Join(ref, "\n"))
			d.wordsRef = len(rw)
			d.f1 = f1(rw, got)
			d.f1c = f1(words(strings.Join(search.CleanPDFPages(ref), "\n")), got)
		}
		out = append(out, d)
	}
	return out
}

func report(w io.Writer, files []string, refs map[string][]string, runs []*run, top int) {
	scores := make([][]docScore, len(runs))
	for i, r := range runs {
		scores[i] = score(files, refs, r)
	}
	fmt.Fprintf(w, "\n| extractor | docs | failures | empty | mean F1 | median F1 | mean F1 (ref cleaned alike) | docs F1<0.9 | pages | total time | pages/s | slowest doc (CPU) | docs over 2 s CPU | CPU (user+sys) | start cold / warm |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range runs {
		s := scores[i]
		var f1s, f1cs []float64
		fails, empty, below, over2, pages := 0, 0, 0, 0, 0
		total := 0.0
		slow := docScore{}
		for _, d := range s {
			total += d.ms
			if d.cpu > slow.cpu {
				slow = d
			}
			if d.cpu > 2000 {
				over2++
			}
			if d.err != "" {
				fails++
			} else {
				pages += d.pages
			}
			if d.emptyText {
				empty++
			}
			if d.hasRef {
				f1s = append(f1s, d.f1)
				f1cs = append(f1cs, d.f1c)
				if d.f1 < 0.9 {
					below++
				}
			}
		}
		start := "—"
		if r.cold > 0 {
			start = fmt.Sprintf("%.2f s / %.0f ms", r.cold/1000, r.warm)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %d | %d | %.1f s | %.0f | %.2f s (%s) | %d | %.1f s | %s |\n",
			r.name, len(s), fails, empty, fmtF(mean(f1s)), fmtF(median(f1s)), fmtF(mean(f1cs)), below, pages,
			total/1000, float64(pages)/(total/1000), slow.cpu/1000, short(slow.path), over2, r.cpu.Seconds(), start)
	}
	for i, r := range runs {
		s := append([]docScore(nil), scores[i]...)
		sort.Slice(s, func(a, b int) bool { return s[a].cpu > s[b].cpu })
		fmt.Fprintf(w, "\nslowest documents (CPU; wall time on a busy machine in brackets), %s:\n", r.name)
		for _, d := range s[:min(top, len(s))] {
			fmt.Fprintf(w, "  %8.0f ms CPU (%6.0f ms)  %4d pages  F1 %s  %s\n", d.cpu, d.ms, d.pages, fmtF(d.f1), short(d.path))
		}
		sort.Slice(s, func(a, b int) bool { return s[a].f1 < s[b].f1 })
		fmt.Fprintf(w, "lowest F1, %s:\n", r.name)
		for _, d := range s[:min(top, len(s))] {
			fmt.Fprintf(w, "  F1 %s (cleaned ref %s)  words %d vs %d  %s %s\n", fmtF(d.f1), fmtF(d.f1c), d.wordsGot, d.wordsRef, short(d.path), oneLine(d.err))
		}
		n := 0
		for _, d := range scores[i] {
			if d.err != "" {
				if n == 0 {
					fmt.Fprintf(w, "failures, %s:\n", r.name)
				}
				n++
				fmt.Fprintf(w, "  %s: %s\n", short(d.path), oneLine(d.err))
			}
		}
		m := 0
		for _, d := range scores[i] {
			if d.hasRef && d.err == "" && !d.pageCountOK {
				m++
			}
		}
		fmt.Fprintf(w, "page count differs from pdftotext's: %d documents\n", m)
	}
}

func writeJSON(path string, files []string, refs map[string][]string, runs []*run) {
	type row struct {
		Path  string  `json:"path"`
		Run   string  `json:"run"`
		F1    float64 `json:"f1"`
		F1c   float64 `json:"f1_ref_cleaned"`
		Ms    float64 `json:"ms"`
		Pages int     `json:"pages"`
		Err   string  `json:"err,omitempty"`
	}
	var rows []row
	for _, r := range runs {
		for _, d := range score(files, refs, r) {
			rows = append(rows, row{d.path, r.name, d.f1, d.f1c, d.ms, d.pages, d.err})
		}
	}
	b, _ := json.MarshalIndent(rows, "", " ")
	check(os.WriteFile(path, b, 0o644))
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtF(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.3f", x)
}

func short(p string) string {
	if i := strings.Index(p, "/texlive-doc/"); i >= 0 {
		return p[i+len("/texlive-doc/"):]
	}
	return p
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
