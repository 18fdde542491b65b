// Package tripletio reads and writes triplet files and request bodies: the
// wire formats in which extractors bulk-import model.TripletInput values.
//
// It owns four input formats and one output format:
//
//   - JSON: one array of triplet objects, decoded element by element.
//   - JSONL (NDJSON): one triplet object per line.
//   - TSV: "source<TAB>relationship<TAB>target[<TAB>weight]" rows, '#'
//     comment lines, no quoting.
//   - CSV: the same columns with encoding/csv quoting rules.
//   - Encoder writes NDJSON, the export format, which NewReader reads back
//     into identical values.
//
// Any input may be gzip-compressed; NewReader detects the gzip magic bytes
// whatever the format asked for, and Auto sniffs the format from the first
// bytes. OpenFile opens a path with the CLI conventions ("-" is standard
// input, ".gz" is decompressed).
//
// # Streaming
//
// A Reader never holds more than one record plus fixed-size buffers, so an
// import of millions of triplets runs in constant memory. One record (a line,
// a CSV record, an array element) is bounded by ReaderOptions.MaxLineBytes;
// a longer one is an error naming its line, not an allocation.
//
// # Syntax versus validity
//
// The Reader checks syntax and that source, relationship and target are
// present and not blank; nothing else. model.ValidateTriplet applies the
// content rules of API.md (lengths, UTF-8, control characters, weight range,
// vector dimension, id charset) when the triplets are imported, so that the
// HTTP API and the CLI reject the same inputs with the same messages.
//
// # Errors
//
// Every error Next returns other than io.EOF is a *LineError carrying the
// 1-based line (or array element) of the offending record. Most errors are
// per record and the next call to Next resumes at the following record, so
// a caller can report many bad lines at once; after an error the Reader
// cannot resume from (an I/O error, broken JSON array syntax) Stopped
// reports true and Next keeps returning that error.
//
// Errors come in two kinds, told apart by AnySyntax: a body that cannot be
// read as a whole (ErrSyntax: broken JSON or CSV quoting; a corrupt gzip
// stream; a failed read), which the API answers 400, and a record that was
// read whole but is not a valid triplet (ErrInvalidRecord, ErrMissingField,
// ErrUnknownField, ErrInvalidUTF8, ErrInvalidWeight, ErrLineTooLong), which
// it answers 422 naming the line. Both name their line.
//
// # Concurrency and memory
//
// A Reader or an Encoder is not safe for concurrent use; use one per
// goroutine. The package's functions are safe for concurrent use.
// Strings and slices stored into an model.TripletInput by Next are owned by
// the caller: they never alias the Reader's buffers and stay valid after
// later calls. (For TSV and CSV the three names of one row share a single
// allocation, so retaining one of them retains the row.)
package tripletio
