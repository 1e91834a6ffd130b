package search

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"
)

// The PDFs in testdata/pdf are real documents of different kinds (see
// testdata/ATTRIBUTION.md): a two-column Elsevier article, a Russian
// document typeset by XeTeX, and a scanned page of the article with an OCR
// text layer. The REVTeX arXiv paper may not be copied into the project
// (its license), so its tests read it from ../shared and skip without it.
func readPDF(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/pdf/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const arxivPDF = "../../shared/fixtures/pdf/arxiv-1111.2011v2.pdf"

func readArxivPDF(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(arxivPDF)
	if err != nil {
		t.Skip("needs ../shared/fixtures beside the checkout: ", err)
	}
	return b
}

func arxivAbstract(t *testing.T) []string {
	recs, err := ParseArxivFeed(fixture(t, "arxiv/legacy-2016-id_list-1111.2011v2.atom.xml"))
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	return words(recs[0].Abstract)
}

// inOrder is the share of want's words found in got in the same order.
func inOrder(want, got []string) float64 { return float64(lcs(want, got)) / float64(len(want)) }

func TestPDFAbstractWordOrder(t *testing.T) {
	t.Parallel()
	data := readArxivPDF(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	defer srv.Close()
	doc, err := NewFetcher(testClient(), FetchOptions{AllowPrivate: true}).Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ContentType != "application/pdf" || len(doc.Pages) != 8 {
		t.Fatalf("type %s pages %d", doc.ContentType, len(doc.Pages))
	}
	want := arxivAbstract(t)
	ratio := inOrder(want, words(doc.Pages[0]))
	t.Logf("abstract words recovered in order: %.1f%% of %d", 100*ratio, len(want))
	if ratio < 0.98 {
		t.Errorf("only %.1f%% of the abstract recovered in order", 100*ratio)
	}
	// the authors' names keep their accents, composed (NFC)
	if !strings.Contains(doc.Pages[0], "Zlatko Tešanović") || !norm.NFC.IsNormalString(doc.Text) {
		t.Errorf("accents lost or not NFC: %q", doc.Pages[0][:200])
	}
	// running heads: the page number printed at the foot of every page is
	// gone, so a chunk never ends in a stray "3"
	for i, p := range doc.Pages[1:] {
		if last := lastLine(p); last == strconv.Itoa(i+2) {
			t.Errorf("page %d still ends in its page number", i+2)
		}
	}
	chunks := ChunkPages(doc.Pages, ChunkOptions{})
	if len(chunks) < 8 || chunks[0].Page != 1 || chunks[len(chunks)-1].Page != 8 {
		t.Errorf("chunks %d", len(chunks))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}

// A scanned page carries its text only in an invisible OCR layer over the
// page's image (Tesseract's output of the article's first page at 200 dpi).
func TestPDFScannedPageWithTextLayer(t *testing.T) {
	t.Parallel()
	born, err := PDFPagesWithin(readPDF(t, "elsarticle-elstest-5p.pdf"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := PDFPagesWithin(readPDF(t, "scanned-tesseract-elstest-5p-p1.pdf"), time.Minute)
	if err != nil || len(pages) != 1 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	abstract := born[0][strings.Index(born[0], "In this work"):strings.Index(born[0], "Keywords")]
	want := words(abstract)
	ratio := inOrder(want, words(pages[0]))
	t.Logf("OCR layer: %.1f%% of the abstract's %d words in order", 100*ratio, len(want))
	if ratio < 0.9 {
		t.Errorf("only %.1f%% of the abstract read from the OCR layer:\n%s", 100*ratio, pages[0])
	}
}

// A two-column article reads column by column: a sentence that runs down
// the left column is not interleaved with the right one.
func TestPDFTwoColumnReadingOrder(t *testing.T) {
	t.Parallel()
	pages, err := PDFPagesWithin(readPDF(t, "elsarticle-elstest-5p.pdf"), time.Minute)
	if err != nil || len(pages) != 4 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	sentence := words("Although quadrupole excitons (QE) in cuprous oxide crystals are good candidates for BEC due to their " +
		"narrow line-width and long life-time there are some factors impeding BEC [1, 2]. One of these factors is that due " +
		"to the small but non negligible coupling to the photon bath, one must consider BEC of the corresponding mixed " +
		"light-matter states called polaritons")
	got := words(pages[0])
	// the words must be consecutive, not only in order
	if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+strings.Join(sentence, " ")+" ") {
		t.Errorf("the introduction's first sentences are not read as one run of text:\n%s", pages[0])
	}
}

func TestPDFNonLatinScript(t *testing.T) {
	t.Parallel()
	pages, err := PDFPagesWithin(readPDF(t, "churchslavonic-ru.pdf"), time.Minute)
	if err != nil || len(pages) != 10 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	first := strings.Join(strings.Fields(pages[0]), " ")
	for _, want := range []string{
		"Александр Андреев и Михаил Крутиков",
		"Пакет churchslavonic позволяет верстать церковнославянские документы.",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("missing %q in %q", want, first[:min(len(first), 400)])
		}
	}
	if !norm.NFC.IsNormalString(strings.Join(pages, "")) {
		t.Error("text is not NFC")
	}
}

// The reference list is found so that retrieval can down-weight it, and no
// chunk mixes the paper's body with its references.
func TestPDFReferencesAreMarked(t *testing.T) {
	t.Parallel()
	pages, err := PDFPagesWithin(readArxivPDF(t), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	page, off, ok := ReferencesStart(pages)
	if !ok {
		t.Fatal("no reference list found")
	}
	t.Logf("references start on page %d: %q", page+1, firstN(pages[page][off:], 80))
	chunks := ChunkPages(pages, ChunkOptions{})
	var body, refs int
	for i, c := range chunks {
		if c.Index != i {
			t.Fatalf("chunk %d has index %d", i, c.Index)
		}
		if c.References {
			refs++
			continue
		}
		if refs > 0 {
			t.Errorf("body chunk %d (page %d) after the references", i, c.Page)
		}
		body++
	}
	if body == 0 || refs == 0 {
		t.Fatalf("body %d, reference chunks %d", body, refs)
	}
	if chunks[0].References || !strings.Contains(chunks[0].Text, "Bethe lattice") {
		t.Errorf("the abstract's chunk: %+v", chunks[0])
	}
	// the reference chunks hold citations, the last body chunk does not
	// run into them
	var refText strings.Builder
	for _, c := range chunks {
		if c.References {
			refText.WriteString(c.Text)
		} else if strings.Contains(c.Text, "Phys. Rev. Lett.") && strings.Count(c.Text, "Phys. Rev.") > 3 {
			t.Errorf("body chunk on page %d looks like references: %q", c.Page, firstN(c.Text, 120))
		}
	}
	if strings.Count(refText.String(), "Phys. Rev.") < 5 {
		t.Errorf("reference chunks: %q", firstN(refText.String(), 300))
	}
	// a chunk's offsets point into its page
	for _, c := range chunks {
		if pages[c.Page-1][c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d offsets %d:%d do not match its text", c.Index, c.Start, c.End)
		}
	}
}

func TestChunkPagesSplitsAroundReferencesAndAppendix(t *testing.T) {
	t.Parallel()
	refs := "References\n[1] A. Author, Some title, J. Phys. 12 (1999) 3.\n[2] B. Author, Other title, Nature 400 (2001) 5.\n[3] C. Author, Third, Science 1 (2003) 7.\n"
	pages := []string{
		"Introduction. We study things. " + strings.Repeat("Body text goes on. ", 20),
		"More body. Conclusions are drawn.\n" + refs + "Appendix A. Derivation\nThe derivation follows here.",
		"Appendix B. More maths on this page.",
	}
	chunks := ChunkPages(pages, ChunkOptions{TargetTokens: 40, OverlapTokens: -1})
	var got []string
	for _, c := range chunks {
		kind := "body"
		if c.References {
			kind = "refs"
		}
		got = append(got, kind+":"+firstN(c.Text, 12))
		if pages[c.Page-1][c.Start:c.End] != c.Text {
			t.Fatalf("offsets of %q", c.Text)
		}
		if c.References != strings.Contains(c.Text, "Author") {
			t.Errorf("chunk %q marked references=%v", c.Text, c.References)
		}
	}
	t.Log(got)
	if last := chunks[len(chunks)-1]; last.References || last.Page != 3 {
		t.Errorf("the appendix after the references is body text: %+v", last)
	}
}

func firstN(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

func TestCleanPDFPages(t *testing.T) {
	t.Parallel()
	head := "Journal of Things 12 (2020) %d\n"
	page := func(n int, body string) string {
		return strings.Replace(head, "%d", strconv.Itoa(n), 1) + body + "\n" + strconv.Itoa(n)
	}
	raw := []string{
		page(1, "The self-\r\nconsistent ap\ufffe\r\nproach is e\ufb03cient; Te\u02c7sanovi\u00b4c"),
		page(2, "A well-\nKnown result, and the Ka\u0308hler case."),
		page(3, "Plain text\x1b[31m with an escape."),
		page(4, "Last page."),
	}
	got := CleanPDFPages(raw)
	want := []string{
		"The selfconsistent approach is efficient; Tešanović",
		"A well-\nKnown result, and the Kähler case.",
		"Plain text with an escape.",
		"Last page.",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("page %d:\n got %q\nwant %q", i+1, got[i], want[i])
		}
	}
	// two pages are too few to call a line a running head
	two := CleanPDFPages([]string{"Head\nbody one", "Head\nbody two"})
	if two[0] != "Head\nbody one" {
		t.Errorf("two pages: %q", two)
	}
}

// A document that overruns its deadline costs that document only: the
// reader's slot is rebuilt and the next document reads in full.
func TestPDFExtractionHasADeadline(t *testing.T) {
	t.Parallel()
	data := readPDF(t, "churchslavonic-ru.pdf")
	e := newPDFEngine(pdfEngineOptions{Slots: 1, CacheDir: pdfCacheDir()})
	if _, err := e.pages(data, time.Nanosecond); !errors.Is(err, ErrPDFTooSlow) {
		t.Errorf("err %v, want ErrPDFTooSlow", err)
	}
	pages, err := e.pages(data, time.Minute)
	if err != nil || len(pages) != 10 {
		t.Errorf("after a timeout: %d pages, %v", len(pages), err)
	}
	if e.replaced != 1 {
		t.Errorf("slots rebuilt: %d, want 1", e.replaced)
	}
}

// A long document shares its pages out among the idle slots, and the text
// comes out the same as from one slot, page for page.
func TestPDFLongDocumentSharedAmongSlots(t *testing.T) {
	t.Parallel()
	data := readPDF(t, "churchslavonic-ru.pdf") // 10 pages
	one := newPDFEngine(pdfEngineOptions{Slots: 1, CacheDir: pdfCacheDir()})
	want, err := one.pages(data, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	shared := newPDFEngine(pdfEngineOptions{Slots: 4, SplitPages: 3, CacheDir: pdfCacheDir()})
	got, err := shared.pages(data, time.Minute)
	if err != nil || len(got) != len(want) {
		t.Fatalf("%d pages, %v", len(got), err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("page %d differs when shared out:\n%q\n%q", i+1, firstN(got[i], 80), firstN(want[i], 80))
		}
	}
	if len(shared.slots) != 4 {
		t.Errorf("%d slots back after the document, want 4", len(shared.slots))
	}
	// with a deadline that fires, every slot that took part is rebuilt
	// and the next document still reads
	if _, err := shared.pages(data, time.Nanosecond); !errors.Is(err, ErrPDFTooSlow) {
		t.Errorf("err %v, want ErrPDFTooSlow", err)
	}
	if got, err := shared.pages(data, time.Minute); err != nil || got[9] != want[9] {
		t.Errorf("after a timeout: %v", err)
	}
}

// Broken documents come back as errors, never panics, and the reader goes
// on serving good ones.
func TestPDFBrokenDocuments(t *testing.T) {
	t.Parallel()
	good := readPDF(t, "elsarticle-elstest-5p.pdf")
	corrupt := append([]byte(nil), good...)
	for i := len(corrupt) / 4; i < len(corrupt); i += 97 {
		corrupt[i] ^= 0x5a
	}
	for name, data := range map[string][]byte{
		"empty":     {},
		"header":    []byte("%PDF-1.7\n"),
		"garbage":   []byte("%PDF-1.4 garbage \x00\xff"),
		"truncated": good[:len(good)/2],
		"corrupted": corrupt,
		"html":      []byte("<html><body>not a pdf</body></html>"),
	} {
		pages, err := PDFPagesWithin(data, 20*time.Second)
		t.Logf("%s: %d pages, err %v", name, len(pages), err)
		if err == nil && len(pages) == 0 {
			t.Errorf("%s: no pages and no error", name)
		}
		if err != nil && !strings.Contains(err.Error(), "not a readable PDF") {
			t.Errorf("%s: the message does not say what is wrong: %v", name, err)
		}
	}
	if pages, err := PDFPagesWithin(good, time.Minute); err != nil || len(pages) != 4 {
		t.Errorf("a good PDF after broken ones: %d pages, %v", len(pages), err)
	}
}

// Documents read at the same time each get their own text.
func TestPDFConcurrentReads(t *testing.T) {
	t.Parallel()
	docs := map[string]string{"scanned-tesseract-elstest-5p-p1.pdf": "polariton", "churchslavonic-ru.pdf": "Пакет", "elsarticle-elstest-5p.pdf": "polariton"}
	var wg sync.WaitGroup
	for round := 0; round < 2; round++ {
		for name, want := range docs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pages, err := PDFPagesWithin(readPDF(t, name), time.Minute)
				if err != nil || len(pages) == 0 || !strings.Contains(pages[0], want) {
					t.Errorf("%s: %d pages, %v", name, len(pages), err)
				}
			}()
		}
	}
	wg.Wait()
}

// FuzzPDFPages feeds the reader real PDFs, cut off and corrupted: it must
// never panic or hang, and what it returns is clean text.
//
//	go test -run '^$' -fuzz FuzzPDFPages -fuzztime 60s ./search/
func FuzzPDFPages(f *testing.F) {
	for _, name := range []string{"elsarticle-elstest-5p.pdf", "churchslavonic-ru.pdf", "scanned-tesseract-elstest-5p-p1.pdf"} {
		b := readPDF(f, name)
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:1024])
		bad := append([]byte(nil), b...)
		bad[len(bad)/3] ^= 0xff
		f.Add(bad)
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pages, err := PDFPagesWithin(data, 10*time.Second)
		if err != nil {
			return
		}
		for _, p := range pages {
			if strings.ContainsAny(p, "\x1b\x00\u009b") {
				t.Fatalf("control characters in page text: %q", firstN(p, 200))
			}
		}
	})
}

// TestPDFCorruptionSweep reads thousands of cut-off and corrupted copies of
// the test PDFs: go test -fuzz is slow on the reader (coverage over the
// WebAssembly bindings, a few executions a second), so this sweep is the
// broad look. Opt-in (RESEARCHTUI_SLOW_TESTS=1; PDF_SWEEP=N copies, 2000 by
// default): a few minutes.
func TestPDFCorruptionSweep(t *testing.T) {
	t.Parallel()
	if os.Getenv("RESEARCHTUI_SLOW_TESTS") == "" {
		t.Skip("set RESEARCHTUI_SLOW_TESTS=1 (takes minutes)")
	}
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("PDF_SWEEP")); err == nil && v > 0 {
		n = v
	}
	var seeds [][]byte
	for _, name := range []string{"elsarticle-elstest-5p.pdf", "churchslavonic-ru.pdf", "scanned-tesseract-elstest-5p-p1.pdf"} {
		seeds = append(seeds, readPDF(t, name))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	read, failed := 0, 0
	for i := range n {
		b := append([]byte(nil), seeds[i%len(seeds)]...)
		switch rng.IntN(4) {
		case 0: // cut off anywhere
			b = b[:rng.IntN(len(b))]
		case 1: // a few bytes flipped
			for range 1 + rng.IntN(8) {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 2: // a run of bytes overwritten, as a broken download would
			at := rng.IntN(len(b))
			for j := at; j < min(len(b), at+1+rng.IntN(4096)); j++ {
				b[j] = byte(rng.IntN(256))
			}
		case 3: // a piece cut out of the middle
			at := rng.IntN(len(b))
			b = append(b[:at], b[min(len(b), at+1+rng.IntN(8192)):]...)
		}
		pages, err := PDFPagesWithin(b, 10*time.Second)
		if err != nil {
			failed++
			continue
		}
		read++
		for _, p := range pages {
			if strings.ContainsAny(p, "\x1b\x00\u009b") {
				t.Fatalf("copy %d: control characters in page text", i)
			}
		}
	}
	t.Logf("%d corrupted copies in %s: %d read, %d refused with an error, no panic", n, time.Since(start).Round(time.Second), read, failed)
}
