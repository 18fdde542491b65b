// Package resident keeps what a long-running kgctx holds resident to what
// it uses.
//
// Opening a store reads every record of it: Badger's tables, which it maps
// into memory uncompressed, are read from start to end, and each page read
// stays in the process's resident set for as long as the file is mapped,
// although the store then serves from its in-memory graph and reads a
// small part of the tables again. On a 1M-node store that is about 1 GiB
// of resident file pages the process never reads twice. DropMapped tells
// the kernel that the mapped pages of a folder's files are not needed
// (madvise MADV_DONTNEED): they leave the resident set and stay in the
// page cache, from which the pages read later come back at the cost of a
// minor fault; nothing is written or lost (the mappings are of files, and
// Badger's tables are read-only).
// DropMappedWhile does so every interval while a store loads, so that
// the pages behind the load leave as it goes and the resident set never
// holds the whole store beside the heap.
//
// Its Go heap is the other part: TuneGC bounds the garbage the collector
// lets pile up beside a large live heap (Headroom), where Go's default
// lets the heap grow to twice what is live.
//
// # Concurrency
//
// DropMapped is safe for concurrent use and with readers of the mappings:
// a page read after it is faulted in again. DropMappedWhile runs one
// goroutine, which its stop ends (stop waits for it). TuneGC starts one tuner per
// process, whoever calls it.
//
// # Memory ownership
//
// Nothing is shared with callers.
//
// resident's errors are the OS's, wrapped with the file they concern; it
// has no errors.go.
package resident
