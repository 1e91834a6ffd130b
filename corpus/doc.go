// Package corpus is the person's own documents as a source: the manifest
// of what is indexed (corpus.json in the data dir: path, size, modification
// time and content hash of each file, so that unchanged files are skipped
// on re-add, changed ones re-indexed and removed ones dropped), the
// ingestion that reads, chunks, stores and embeds them (Add), and the
// documents the local source (search.NewLocal, which stays in search)
// searches (Docs).
//
// Each document is stored as a source (a search.Record with Source
// "local", key search.LocalKey(path)) with its chunks. Chunks are embedded
// as they are committed when an Embedder is given, else by the next run's
// index stage.
//
// Ingestion writes to the store, so it lives above it (ARCHITECTURE.md §2):
// it imports store, search (the parsers and chunking) and search/bib, and
// works in store's own types (store.Chunk, store.SourceBatch,
// store.IndexStatus). Reader and Store name only the methods of the store
// it calls, so a store.DB serves Docs and the owner's *store.Store serves
// Add and ImportLibrary as they are, and tests give a store in memory. The
// embedding model comes as an Embedder (functions over the model backend).
// It prints nothing: outcomes come back as values (Result, File reports,
// Progress snapshots, errors) for the command line to show.
package corpus
