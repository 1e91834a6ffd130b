// Package zotero reads a person's Zotero library (My Library) as
// bib.Items, two ways:
//
//   - API reads it through the local API of a running Zotero 7 or later
//     ("Allow other applications on this computer to communicate with
//     Zotero", Settings → Advanced), which serves the web API's JSON on
//     http://127.0.0.1:23119/api/users/0/. Collections, top-level items and
//     attachments are read page by page (start, limit=100, Total-Results or
//     Link rel="next"), each page checked to have the first page's
//     Last-Modified-Version (else the read starts again); If-Modified-Since-
//     Version makes an unchanged library one 304.
//   - ReadDatabase reads zotero.sqlite while Zotero is closed, read only:
//     it takes a reader's shared lock itself (POSIX or Windows locks, at
//     the bytes SQLite locks), which fails with ErrLocked while Zotero holds
//     its exclusive lock, then opens the file with mode=ro&immutable=1, so
//     SQLite makes no journal, WAL or -shm file beside it. A database left
//     with a hot journal or a WAL with frames (Zotero was killed) is not
//     read: starting and closing Zotero once repairs it.
//
// Both give the same Items: the item key as ID, the CSL type Zotero's own
// schema maps the item type to, the fields by their base fields
// (proceedingsTitle, bookTitle, websiteTitle... are the Venue), authors
// (creator type author, or the type's primary creator: a film's director)
// and editors, a DOI in lower case (from Extra's "DOI: ..." line when the
// type has no DOI field), tags, collections as paths ("Parent/Child"), and
// the absolute paths of the child attachments that are PDFs, EPUBs or HTML
// snapshots (PDFs first). Items in the trash, standalone notes and
// attachments, and collections in the trash are left out. Every string is
// valid UTF-8 without controls (an abstract keeps "\n" between
// paragraphs, as search/bib does).
//
// # Attachment files
//
// An imported file is DATA_DIR/storage/<attachment key>/<name>, stored as
// "storage:<name>"; a linked file's path is absolute or, stored as
// "attachments:<rel>", relative to the "Linked Attachment Base Directory"
// (a preference in Zotero's profile, not in the database: give it as
// BaseDir). Through the API no file is downloaded: Zotero's answer for an
// imported attachment carries links.enclosure.href, a file:// URL of the
// file (Zotero.Item.prototype.toResponseJSON, item.js); for the others,
// GET items/<key>/file/view/url answers the file:// URL as text/plain
// (server_localAPI.js, Zotero.Server.LocalAPI.ItemFile:
// `return [200, 'text/plain', item.getLocalFileURL()]`; /file and
// /file/view answer 302 with that URL as Location). Paths are given as
// Zotero knows them: a file not yet downloaded by sync may be missing.
//
// # A crafted database
//
// A data folder is copied, synced and shared, so zotero.sqlite is read as
// untrusted input (db.go): every table queried must be a table in
// sqlite_master (a view or virtual table in its place, which could recurse
// for ever, grow memory without bound or spin, is refused by name); rows
// are capped per item and per query, values are read whole up to their cap
// and cut or left out beyond it without SQLite loading them (octet_length,
// SQLITE_LIMIT_LENGTH), and text in total is capped; the read is stopped
// after three minutes (the driver interrupts SQLite when its context ends);
// and since the driver panics when SQLite runs out of memory, it is used
// through its own API, not database/sql (whose locks a panic leaves held,
// and which may run the driver on a goroutine of its own), and the panic
// becomes an error.
//
// # Versions
//
// Library.Version lets a later import skip an unchanged library. Zotero 10
// counts every local change (libraries.clientVersion, which its local API
// reports as Last-Modified-Version). Zotero 7 to 9 have only the version of
// the last sync: the API reports it, so a change not yet synced shows after
// the next sync; ReadDatabase gives it only when nothing is unsynced, else
// 0, which means "read it all".
//
// # The SQLite driver
//
// github.com/ncruces/go-sqlite3 (v0.37.0): SQLite translated from Wasm to
// Go by wasm2go, so no cgo and no wazero at run time. Measured on the 2-core
// development machine (shared, so the cold builds are the lowest of four
// runs; a fresh GOCACHE each, the standard library compiled too), for a
// tiny program opening a database, against the same program without a
// driver (11.8 s, 13.6 s with -race, 2.4 MB):
//
//	driver                          cold build  cold -race  binary    read 200 items  with -race
//	ncruces/go-sqlite3 v0.37.0      +21 s       +19 s       +10.8 MB  14 ms           147 ms
//	modernc.org/sqlite v1.62.0      +27 s       +34 s       +7.5 MB   10 ms           188 ms
//	glebarez/go-sqlite v1.23.0      +26 s       +36 s       +6.9 MB   17 ms           230 ms
//
// (glebarez/go-sqlite wraps modernc.org/sqlite v1.55.) CI runs
// go test -race cold on 2 cores, where ncruces costs least; its larger
// binary is the price.
package zotero
