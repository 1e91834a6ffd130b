// Package vector is researchtui's vector index: chunk IDs and their
// embeddings, searched by cosine similarity.
//
// While a collection is small every search is an exact SIMD scan (Exact is
// that scan on its own: the reference every approximate search is tested
// against). Past that an Index builds its own HNSW graph in the background
// (hnsw.go). An Index is saved to a file laid out to be memory-mapped back
// (file.go), so opening a million vectors costs a map and a checksum pass
// over the small sections, not a parse; the vectors are verified in the
// background (file_check.go).
//
// The package knows nothing of bbolt, nor of where the vectors come from.
// That is the job of an index's Keeper (the store: store/indexstore.go),
// which saves the file when that pays, catches the index up with the
// database (Catchup) and refills it when its file fails the check. The
// index is a package of its own so that it can be read, tested and
// benchmarked without a database, and so that the store keeps only the
// glue; store imports vector, never the other way.
package vector
