// Package corpus is the person's own documents as a source: the manifest
// of what is indexed (corpus.json in the data dir: path, size, modification
// time and content hash of each file, so that unchanged files are skipped
// on re-add, changed ones re-indexed and removed ones dropped), the
// ingestion that reads, chunks, stores and embeds them (Add), and the
// documents the local source searches (Docs).
//
// Each document is stored as a source (a search.Record with Source
// "local", key search.LocalKey(path)) with its chunks. Chunks are embedded
// as they are committed when an Embedder is given, else by the next run's
// index stage.
//
// It imports search only: the store and the embedding model come through
// the small interfaces it declares (Reader, Store, Index, Embedder), which
// the command line (ui/cli) implements over store.Store and the model
// backend. It prints nothing: outcomes come back as values (Result, File
// reports, Progress snapshots, errors) for the command line to show.
package corpus
