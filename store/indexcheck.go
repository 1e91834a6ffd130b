package store

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
// gate) while the index is emptied, the file unmapped, and every vector
// read back from the store, exactly as for a file found damaged at open;
// the graph is then rebuilt in the background and the file rewritten.
// Nothing saves the index while its file is unverified: a save would give
// damaged vectors a fresh checksum.

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

// checkFile finishes verifying the index file and returns the outcome: nil
// when the file is sound or the index has no unverified file, an error
// wrapping errCorrupt when the vectors' checksum does not match (the index
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
				c.err = fmt.Errorf("%w: section %d checksum mismatch (found after it was opened)", errCorrupt, secVectors)
			}
		}
	}
	err := c.err
	c.mu.Unlock()
	if errors.Is(err, errCorrupt) {
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
		ix.goBackground(func() { _ = ix.checkFile(ix.stop) }) // a failed check switches the index to the store itself
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
		c.done, c.err = true, ErrIndexClosed
		c.finished.Store(true)
	}
	c.data = nil
	c.mu.Unlock()
}

// fileFailed makes the index stop using its file: from now on searches
// wait until the reload has put the store's vectors in, and catch-ups in
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
			if ix.onBadFile != nil {
				ix.onBadFile(cause)
			} else {
				ix.dropFile() // no store to reload from: empty
			}
		})
		if !started {
			ix.openGate() // stopping: searches get ErrIndexClosed
		}
	})
}

// openGate lets waiting searches go on.
func (ix *Index) openGate() {
	ix.mu.Lock()
	if ix.gate != nil {
		close(ix.gate)
		ix.gate = nil
	}
	ix.mu.Unlock()
}

// Reloading reports whether the index is reloading its vectors from the
// store after its file failed the check (searches wait meanwhile).
func (ix *Index) Reloading() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.gate != nil
}

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

// reloadIndex is a store-owned index's answer to a file that failed its
// check after opening: the index is emptied and its file dropped (with no
// catch-up or save in flight), then filled from the store as if the file
// had been found damaged at open; searches wait until the vectors are in.
// The graph is then rebuilt in the background and saved.
func (s *Store) reloadIndex(ix *Index, cause error) {
	p := ix.persist
	p.syncMu.Lock() // a catch-up in flight gives up (badFile)
	p.saveMu.Lock() // a save in flight finishes; later ones check first
	dropped := ix.dropFile()
	p.mu.Lock()
	p.haveFile, p.fileSize, p.syncedGen = false, 0, 0
	p.note = "rebuilt from the store: " + cause.Error()
	p.mu.Unlock()
	p.saveMu.Unlock()
	p.syncMu.Unlock()
	if !dropped {
		return
	}
	if err := s.catchUp(ix, ix.stop); err != nil {
		return // closing: the next open finds the damaged file again
	}
	ix.openGate()
	if st := ix.Status(); !st.Graph || st.Linked == st.Nodes {
		_ = s.saveIndex(ix) // no build will save it; a failed save is retried at the next change
	}
}

// Verify waits until the index's file has been checked (finishing the
// check here if it is still running) and, if the check failed, until the
// vectors are back from the store, or until ctx ends. Status then tells
// what happened (Note). A search does the same before it answers.
func (ix *Index) Verify(ctx context.Context) error {
	ix.awaitFileCheck()
	return ix.WaitLoaded(ctx)
}

// WaitLoaded blocks while the index reloads its vectors from the store
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
