package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// PDF text comes from pdfium (Chrome's PDF engine) compiled to WebAssembly
// and run by wazero inside this process: no cgo, no system library, and a
// document cannot reach outside its sandbox (no file system is mounted).
//
// A pdfEngine holds a few slots. Each slot is its own wazero runtime with
// a go-pdfium pool of one worker, and every document gets a fresh module
// instance (ReuseWorkers off: instantiating costs a few milliseconds), so
// one document's heap never outlives it. A document that runs past its
// deadline has its slot's context cancelled, which stops the WebAssembly
// code where it is (WithCloseOnContextDone); that slot's runtime is then
// closed and rebuilt for the next document. A trap (pdfium aborting, the
// memory bound reached) ends only that document's instance.

// ErrPDFUnavailable wraps a failure to start the PDF engine itself.
var ErrPDFUnavailable = errors.New("pdf: the PDF reader could not start")

const (
	// pdfMemoryLimit bounds the WebAssembly memory of one document: the
	// file is copied into it, and pdfium's parse structures grow with it.
	pdfMemoryLimit = 1 << 30
	// pdfMaxPageChars caps the text taken from one page (a page of a few
	// thousand characters is normal; millions mean a generated document).
	pdfMaxPageChars = 1 << 20
)

// pdfEngineOptions configure a pdfEngine; zero values mean the defaults.
type pdfEngineOptions struct {
	// Slots is how many documents are read at the same time (default: the
	// number of CPUs, at most 4).
	Slots int
	// CacheDir holds wazero's compiled code across processes; "" means
	// compiled code is kept in memory only.
	CacheDir string
	// MemoryLimit bounds each document's WebAssembly memory in bytes.
	MemoryLimit int64
	// SplitPages is how many pages a document needs per slot before it is
	// shared out among idle slots (default pdfSplitPages).
	SplitPages int
}

type pdfEngine struct {
	opt pdfEngineOptions

	once    sync.Once
	initErr error
	// InitTook is how long starting took: compiling pdfium (or loading the
	// compiled code from the cache) and the first runtime.
	initTook time.Duration
	cache    wazero.CompilationCache
	rc       wazero.RuntimeConfig
	slots    chan *pdfSlot

	mu       sync.Mutex
	replaced int // slots rebuilt after a deadline or a failure
}

type pdfSlot struct {
	ctx    context.Context
	cancel context.CancelFunc
	pool   pdfium.Pool
}

func newPDFEngine(opt pdfEngineOptions) *pdfEngine {
	if opt.Slots <= 0 {
		opt.Slots = min(runtime.NumCPU(), 4)
	}
	if opt.MemoryLimit <= 0 {
		opt.MemoryLimit = pdfMemoryLimit
	}
	if opt.SplitPages <= 0 {
		opt.SplitPages = pdfSplitPages
	}
	return &pdfEngine{opt: opt}
}

// start compiles pdfium (or loads it from the cache) and builds the first
// slot, once. The other slots are built when first needed, after the
// compiled code is in the cache, so pdfium is compiled only once.
func (e *pdfEngine) start() error {
	e.once.Do(func() {
		t0 := time.Now()
		e.cache = wazero.NewCompilationCache()
		if e.opt.CacheDir != "" {
			if c, err := wazero.NewCompilationCacheWithDir(e.opt.CacheDir); err == nil {
				e.cache = c
			}
			// an unusable cache dir costs a compile per process, not the reader
		}
		pages := uint32(min(e.opt.MemoryLimit>>16, 1<<16))
		e.rc = wazero.NewRuntimeConfig().
			WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			WithCompilationCache(e.cache).
			WithCloseOnContextDone(true).
			WithMemoryLimitPages(pages)
		first := &pdfSlot{}
		if err := e.build(first); err != nil {
			e.initErr = fmt.Errorf("%w: %v", ErrPDFUnavailable, err)
			return
		}
		e.slots = make(chan *pdfSlot, e.opt.Slots)
		e.slots <- first
		for range e.opt.Slots - 1 {
			e.slots <- &pdfSlot{}
		}
		e.initTook = time.Since(t0)
	})
	return e.initErr
}

// build gives a slot a fresh runtime and pool.
func (e *pdfEngine) build(s *pdfSlot) error {
	s.ctx, s.cancel = context.WithCancel(context.Background())
	p, err := webassembly.Init(webassembly.Config{
		Context:       s.ctx,
		MaxTotal:      1,
		MaxIdle:       1,
		RuntimeConfig: e.rc,
		// nothing mounted: pdfium reads the bytes we hand it, no files
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard,
		Stderr:   io.Discard,
	})
	if err != nil {
		s.cancel()
		return err
	}
	s.pool = p
	return nil
}

// discard closes a slot's runtime (after a deadline or a failure) so the
// next document builds a fresh one.
func (e *pdfEngine) discard(s *pdfSlot) {
	s.cancel()
	if s.pool != nil {
		s.pool.Close()
	}
	*s = pdfSlot{}
	e.mu.Lock()
	e.replaced++
	e.mu.Unlock()
}

// pdfSplitPages is how many pages a document needs per slot before its
// pages are shared out among idle slots: a 150-page thesis then reads in
// half the time on two cores, while papers keep to one slot (opening the
// document again in another instance costs more than it saves).
const pdfSplitPages = 40

// pages extracts the raw text of every page with pdfium. The deadline d
// covers the document's own work, from the moment a slot is free; starting
// the engine and waiting for a slot are not counted (waiting is bounded by
// the other documents' deadlines). A long document also takes the slots
// that are idle at that moment, never waiting for one, and each reads a
// range of its pages.
func (e *pdfEngine) pages(data []byte, d time.Duration) ([]string, error) {
	if err := e.start(); err != nil {
		return nil, err
	}
	s := <-e.slots
	defer func() { e.slots <- s }()
	var pages []string
	err := e.run(s, d, func(inst pdfium.Pdfium) error {
		doc, n, err := openPDF(inst, data)
		if err != nil {
			return err
		}
		defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc})
		pages = make([]string, n)
		helpers := e.idleSlots(n)
		defer func() {
			for _, h := range helpers {
				e.slots <- h
			}
		}()
		parts := len(helpers) + 1
		bounds := func(k int) (int, int) { return k * n / parts, (k + 1) * n / parts }
		failed := make([]bool, parts)
		var wg sync.WaitGroup
		for k, h := range helpers {
			lo, hi := bounds(k + 1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				failed[k+1] = e.run(h, d, func(inst pdfium.Pdfium) error {
					doc, _, err := openPDF(inst, data)
					if err != nil {
						return err
					}
					defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc})
					return pdfiumRange(inst, doc, pages, lo, hi)
				}) != nil
			}()
		}
		lo, hi := bounds(0)
		err = pdfiumRange(inst, doc, pages, lo, hi)
		wg.Wait()
		if err != nil {
			return err
		}
		for k := 1; k < parts; k++ {
			if failed[k] { // a helper that failed: its pages are read here
				lo, hi := bounds(k)
				if err := pdfiumRange(inst, doc, pages, lo, hi); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pages, nil
}

// idleSlots takes the slots that are free right now, one for every
// SplitPages pages beyond the first, without waiting for any.
func (e *pdfEngine) idleSlots(pages int) []*pdfSlot {
	var out []*pdfSlot
	for len(out)+1 < pages/e.opt.SplitPages {
		select {
		case s := <-e.slots:
			out = append(out, s)
		default:
			return out
		}
	}
	return out
}

// run gives fn a fresh pdfium instance of slot s, under the deadline d. A
// deadline that fires stops the WebAssembly code where it is; the slot's
// runtime is then closed and rebuilt by its next user, as after a panic.
func (e *pdfEngine) run(s *pdfSlot, d time.Duration, fn func(pdfium.Pdfium) error) (err error) {
	if s.pool == nil {
		if err := e.build(s); err != nil {
			*s = pdfSlot{}
			return fmt.Errorf("%w: %v", ErrPDFUnavailable, err)
		}
	}
	timer := time.AfterFunc(d, s.cancel)
	broken := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pdf: reader failed: %v", r)
			broken = true
		}
		if !timer.Stop() {
			// the deadline fired: whatever came back, the slot's context
			// is cancelled and its runtime must be rebuilt
			err = fmt.Errorf("%w (over %s)", ErrPDFTooSlow, d)
			broken = true
		}
		if broken {
			e.discard(s)
		}
	}()
	inst, err := s.pool.GetInstanceWithContext(s.ctx)
	if err != nil {
		broken = true
		return fmt.Errorf("pdf: no reader instance: %w", err)
	}
	defer inst.Close()
	return fn(inst)
}

// openPDF opens a document in inst and counts its pages.
func openPDF(inst pdfium.Pdfium, data []byte) (references.FPDF_DOCUMENT, int, error) {
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		return "", 0, openError(err)
	}
	pc, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err == nil && pc.PageCount <= 0 {
		err = errors.New("no pages")
	}
	if err != nil {
		inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
		return "", 0, fmt.Errorf("pdf: %s", firstLine(err))
	}
	return doc.Document, pc.PageCount, nil
}

// pdfiumRange reads pages [lo, hi) of doc into pages; a page pdfium cannot
// load stays empty.
func pdfiumRange(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT, pages []string, lo, hi int) error {
	for i := lo; i < hi; i++ {
		text, err := pdfiumPageText(inst, doc, i)
		if err != nil {
			if isEngineGone(err) {
				return fmt.Errorf("pdf: page %d: %s", i+1, firstLine(err))
			}
			continue
		}
		pages[i] = text
	}
	return nil
}

func pdfiumPageText(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT, i int) (string, error) {
	pg, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: doc, Index: i})
	if err != nil {
		return "", err
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: pg.Page})
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &pg.Page}})
	if err != nil {
		return "", err
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", err
	}
	if n.Count <= 0 {
		return "", nil
	}
	t, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, StartIndex: 0, Count: min(n.Count, pdfMaxPageChars)})
	if err != nil {
		return "", err
	}
	return t.Text, nil
}

// openError says in words why pdfium would not open a document (its
// errors are numbered codes).
func openError(err error) error {
	switch {
	case errors.Is(err, pdfiumerrors.ErrFormat) || strings.Contains(err.Error(), pdfiumerrors.ErrFormat.Error()):
		return errors.New("pdf: not a readable PDF (damaged, cut off, or not a PDF)")
	case errors.Is(err, pdfiumerrors.ErrPassword) || strings.Contains(err.Error(), pdfiumerrors.ErrPassword.Error()):
		return errors.New("pdf: the document is password-protected")
	case errors.Is(err, pdfiumerrors.ErrSecurity) || strings.Contains(err.Error(), pdfiumerrors.ErrSecurity.Error()):
		return errors.New("pdf: the document's encryption is not supported")
	}
	return fmt.Errorf("pdf: %s", firstLine(err))
}

// isEngineGone tells errors of the WebAssembly instance (closed by the
// deadline, trapped) from pdfium declining one page.
func isEngineGone(err error) bool {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"wasm error", "module closed", "instance is closed", "panic occurred"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// PDFCacheEnv names the environment variable that says where wazero keeps
// compiled pdfium between runs: a directory, or "off" for memory only.
// Unset, it is os.UserCacheDir()/researchtui/wazero — except in test
// binaries, which use a directory under os.TempDir so that tests never
// write to the user's cache.
const PDFCacheEnv = "RESEARCHTUI_WAZERO_CACHE"

func pdfCacheDir() string {
	switch v := os.Getenv(PDFCacheEnv); {
	case v == "off":
		return ""
	case v != "":
		return v
	case testing.Testing():
		return filepath.Join(os.TempDir(), "researchtui-test-wazero-"+strconv.Itoa(os.Getuid()))
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "researchtui", "wazero")
}

var (
	defaultPDFOnce   sync.Once
	defaultPDFEngine *pdfEngine
)

// pdfReader is the process's engine, made on first use: nothing starts
// pdfium until a PDF is read.
func pdfReader() *pdfEngine {
	defaultPDFOnce.Do(func() { defaultPDFEngine = newPDFEngine(pdfEngineOptions{CacheDir: pdfCacheDir()}) })
	return defaultPDFEngine
}

// StartPDFReader starts the PDF engine now instead of at the first PDF and
// reports how long that took (compiling pdfium the first time, loading the
// compiled code from the cache later). Callers that want it ready early
// call it in a goroutine; nothing needs to.
func StartPDFReader() (time.Duration, error) {
	e := pdfReader()
	err := e.start()
	return e.initTook, err
}
