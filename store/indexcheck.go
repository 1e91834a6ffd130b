package store

// Opening an index file checks its header and every section but the
// vectors; the vectors (97% of the file at 768 dimensions) are checksummed
// in the background while the index serves (vector/file_check.go). When
// that check fails, the index stops using the file at once and calls its
// keeper, the store, to reload it: searches wait (the index's gate) while
// the index is emptied, the file unmapped, and every vector read back from
// bbolt, exactly as for a file found damaged at open; the graph is then
// rebuilt in the background and the file rewritten. Nothing saves the
// index while its file is unverified (saveIndex asks CheckFile first): a
// save would give damaged vectors a fresh checksum.

// reloadIndex is a store-owned index's answer to a file that failed its
// check after opening: the index is emptied and its file dropped (with no
// catch-up or save in flight), then filled from the store as if the file
// had been found damaged at open; searches wait until the vectors are in.
// The graph is then rebuilt in the background and saved.
func (s *Store) reloadIndex(p *indexPersist, cause error, stop <-chan struct{}) {
	ix := p.ix
	p.syncMu.Lock() // a catch-up in flight gives up (BadFile)
	p.saveMu.Lock() // a save in flight finishes; later ones check first
	dropped := ix.DropFile()
	p.mu.Lock()
	p.haveFile, p.fileSize, p.syncedGen = false, 0, 0
	p.note = "rebuilt from the store: " + cause.Error()
	p.mu.Unlock()
	p.saveMu.Unlock()
	p.syncMu.Unlock()
	if !dropped {
		return
	}
	if err := s.catchUp(p, stop); err != nil {
		return // closing: the next open finds the damaged file again
	}
	ix.Reloaded()
	if st := ix.Status(); !st.Graph || st.Linked == st.Nodes {
		_ = s.saveIndex(p) // no build will save it; a failed save is retried at the next change
	}
}
