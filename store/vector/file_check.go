package vector

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"sync/atomic"
)

// Opening an index file checks its header and every section but the
// vectors (sizes, bounds, checksums): the IDs, fingerprints and graph, a
// few percent of the file. The vectors (97% of it at 768 dimensions: 3 GB
// at a million) are checksummed in the background, at disk speed, while
// the index serves, so opening costs the small sections, not the file.
//
// The file is still never trusted blindly: when the vectors' checksum does
// not match, the index stops using the file at once. Searches wait (the
// gate) while the keeper empties the index (DropFile), which unmaps the
// file, and refills it, exactly as for a file found damaged at open; the
// graph is then rebuilt in the background and the file rewritten (the
// store's side is store/indexcheck.go). Nothing saves the index while its
// file is unverified (CheckFile): a save would give damaged vectors a
// fresh checksum.

// fileCheck is the verification of the mapped vectors section. It keeps
// its place, so a check stopped by Close and finished by a save (or
// resumed) reads each byte once.
type fileCheck struct {
	mu   sync.Mutex
	data []byte // the section, in the mapping; nil once done
	want uint32
	crc  uint32
	off  int
	done bool
	err  error
	// finished is done, readable without the lock: searches look at it
	// before every query.
	finished atomic.Bool
}

// errCheckStopped: the check was stopped before it finished.
var errCheckStopped = errors.New("store: index file check stopped")

// verifyChunk is how much is checksummed between looks at stop.
var verifyChunk = 8 << 20

// verifyHook, when set (tests), runs before each chunk is checksummed.
var verifyHook func()

// SlowCheck makes file checks read piece bytes at a time and call each
// before every piece, until restore is called: tests of a keeper use it to
// close the keeper in the middle of a check. It must not be called while a
// check runs.
func SlowCheck(piece int, each func()) (restore func()) {
	oldChunk, oldHook := verifyChunk, verifyHook
	verifyChunk, verifyHook = piece, each
	return func() { verifyChunk, verifyHook = oldChunk, oldHook }
}

// CheckFile finishes verifying the index's file (the check Start runs in
// the background) and returns the outcome: nil when the file is sound or
// the index has no unverified file, an error wrapping ErrCorrupt when the
// vectors' checksum does not match (the index then has its keeper reload
// it). A keeper checks before it saves: a save would give damaged vectors a
// fresh checksum.
func (ix *Index) CheckFile() error { return ix.checkFile(nil) }

// BadFile reports whether the index's file failed its check and the index
// has not been emptied yet (DropFile): a keeper's catch-up in flight gives
// up then, since the reload starts over from empty.
func (ix *Index) BadFile() bool { return ix.badFile.Load() }

// checkFile finishes verifying the index file and returns the outcome: nil
// when the file is sound or the index has no unverified file, an error
// wrapping ErrCorrupt when the vectors' checksum does not match (the index
// then reloads: fileFailed). With a stop channel it gives up when stop
// closes, returning errCheckStopped; a later call resumes.
func (ix *Index) checkFile(stop <-chan struct{}) error {
	c := ix.check.Load()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	for !c.done {
		select {
		case <-stop: // a nil stop never closes
			c.mu.Unlock()
			return errCheckStopped
		default:
		}
		if verifyHook != nil {
			verifyHook()
		}
		end := min(c.off+verifyChunk, len(c.data))
		c.crc = crc32.Update(c.crc, crc32.IEEETable, c.data[c.off:end])
		c.off = end
		if c.off == len(c.data) {
			c.done, c.data = true, nil
			c.finished.Store(true)
			if c.crc != c.want {
				c.err = fmt.Errorf("%w: section %d checksum mismatch (found after it was opened)", ErrCorrupt, secVectors)
			}
		}
	}
	err := c.err
	c.mu.Unlock()
	if errors.Is(err, ErrCorrupt) {
		ix.fileFailed(err)
	}
	return err
}

// awaitFileCheck makes a search wait for (or finish) the check of the
// vectors it would read, so that no result ever comes from an unverified
// file: in a run or the TUI the check is long done by the first query; a
// short-lived `researchtui search` pays for it (0.25 s at 100k vectors cold,
// 1.3 s at a million) rather than answer from damaged vectors.
func (ix *Index) awaitFileCheck() {
	if c := ix.check.Load(); c != nil && !c.finished.Load() {
		_ = ix.checkFile(nil) // a damaged file closes the gate the search then waits at
	}
}

// startFileCheck verifies the file in the background.
func (ix *Index) startFileCheck() {
	if ix.check.Load() != nil {
		ix.goBackground(func() { _ = ix.checkFile(ix.stop) }) // a failed check has the keeper reload the index itself
	}
}

// endCheck forgets the check (the mapping is about to go); a check still
// running has finished when it returns. Callers hold mu or are Close.
func (ix *Index) endCheck() {
	c := ix.check.Load()
	if c == nil {
		return
	}
	c.mu.Lock()
	if !c.done {
		c.done, c.err = true, ErrClosed
		c.finished.Store(true)
	}
	c.data = nil
	c.mu.Unlock()
}

// fileFailed makes the index stop using its file: from now on searches
// wait until the reload has put the keeper's vectors in, and catch-ups in
// flight give up. The reload runs once, in the background.
func (ix *Index) fileFailed(cause error) {
	ix.failOnce.Do(func() {
		ix.mu.Lock()
		if ix.closed {
			ix.mu.Unlock()
			return
		}
		ix.badFile.Store(true)
		ix.gate = make(chan struct{})
		ix.mu.Unlock()
		started := ix.goBackground(func() {
			defer ix.openGate()
			if ix.keeper != nil {
				ix.keeper.Reload(cause, ix.stop)
			} else {
				ix.dropFile() // no keeper to reload from: empty
			}
		})
		if !started {
			ix.openGate() // stopping: searches get ErrClosed
		}
	})
}

// Reloaded lets the searches that wait for a reload go on: a keeper calls
// it once its vectors are back, before it saves them (it also happens when
// Keeper.Reload returns).
func (ix *Index) Reloaded() { ix.openGate() }

// openGate lets waiting searches go on.
func (ix *Index) openGate() {
	ix.mu.Lock()
	if ix.gate != nil {
		close(ix.gate)
		ix.gate = nil
	}
	ix.mu.Unlock()
}

// Reloading reports whether the index is reloading its vectors from its
// keeper after its file failed the check (searches wait meanwhile).
func (ix *Index) Reloading() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.gate != nil
}

// DropFile empties the index and releases its file: a keeper's first step
// in Keeper.Reload, with its own catch-ups and saves kept out. It reports
// false if the index was closed.
func (ix *Index) DropFile() bool { return ix.dropFile() }

// dropFile empties the index and releases its file. Nothing else reads the
// mapping by then: searches, insertions and repairs hold the read lock
// (repairs and builds notice the graph is gone), the check has ended, and
// the caller keeps saves out. It reports false if the index was closed.
func (ix *Index) dropFile() bool {
	ix.ensurePos() // not built concurrently with the reset
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return false
	}
	ix.endCheck()
	ix.check.Store(nil)
	ix.base, ix.baseN, ix.segs, ix.g = nil, 0, nil, nil
	ix.n, ix.live, ix.tombs, ix.changes = 0, 0, 0, 0
	ix.pos = map[string]uint32{}
	ix.del, ix.purged = nil, nil
	ix.fileGen = 0
	ix.linked.Store(0)
	if ix.file != nil {
		ix.file.close()
		ix.file = nil
	}
	ix.badFile.Store(false)
	return true
}

// Verify waits until the index's file has been checked (finishing the
// check here if it is still running) and, if the check failed, until the
// vectors are back from its keeper, or until ctx ends. Status then tells
// what happened (Note). A search does the same before it answers.
func (ix *Index) Verify(ctx context.Context) error {
	ix.awaitFileCheck()
	return ix.WaitLoaded(ctx)
}

// WaitLoaded blocks while the index reloads its vectors from its keeper
// because its file failed the check after opening (searches wait for the
// same), or until ctx ends. It returns at once otherwise.
func (ix *Index) WaitLoaded(ctx context.Context) error {
	ix.mu.RLock()
	gate := ix.gate
	ix.mu.RUnlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
