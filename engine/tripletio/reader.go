package tripletio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kgctx/kgctx/engine/model"
)

// bufSize is the size of the read buffers. Lines up to this size are parsed
// in place without copying; longer ones are assembled in a scratch buffer.
const bufSize = 64 << 10

// Reader decodes triplets from a stream, one record per call to Next.
// A Reader is not safe for concurrent use.
type Reader struct {
	format Format
	opts   ReaderOptions

	lines lineReader // JSONL, TSV, CSV

	dec *json.Decoder // JSON array
	lim *limitReader  // under dec: bounds one element
	// jsonState tracks the array: 0 before '[', 1 inside, 2 after ']'.
	jsonState int

	// line is the 1-based line or element of the last record or error.
	line int
	// sawData is set once the first data row of a TSV/CSV input went by:
	// only that row may be a header.
	sawData bool

	// err is sticky: io.EOF at the end, or a *LineError the Reader cannot
	// resume after.
	err error

	// Scratch reused across records.
	jdec *json.Decoder       // JSONL: reused across lines, see decodeLine
	feed lineFeeder          // JSONL: the reader under jdec
	fast fastDecoder         // JSONL: the encoding/json-free path, see fastDecoder
	p    *model.TripletInput // JSON, JSONL: decode target, see decodeLine
	rec  []byte              // CSV: unquoted field bytes of the current record
	ends []int               // CSV: end offset of each field in rec
	// fedBase counts the bytes fed to jdec before the current line.
	fedBase int64
}

// NewReader returns a Reader decoding r in format f with default options.
// See NewReaderWithOptions.
func NewReader(r io.Reader, f Format) (*Reader, error) {
	return NewReaderWithOptions(r, f, nil)
}

// NewReaderWithOptions returns a Reader decoding r in format f; opts nil
// means defaults. Gzip input is decompressed whatever f is; a UTF-8 byte
// order mark at the start is skipped; Auto sniffs the format, reading only
// as far as needed (at most one buffer, 64 KiB).
//
// The Reader does not close r. It may read r ahead of the records returned.
// NewReaderWithOptions fails only for bad arguments (ErrUnknownFormat,
// ErrInvalidOptions). A problem with the input itself, even at its very
// start (a broken gzip header, a read error while sniffing), is reported by
// the first Next as a *LineError on line 1, like every other input error,
// so callers have one place to report them.
func NewReaderWithOptions(r io.Reader, f Format, opts *ReaderOptions) (*Reader, error) {
	if !f.valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnknownFormat, f)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	rd := &Reader{format: f, opts: opts.withDefaults()}
	br, err := rd.open(r)
	if err != nil {
		rd.fail(1, err, true)
		return rd, nil
	}
	if rd.format == JSON {
		rd.lim = &limitReader{r: br, max: int64(rd.opts.MaxLineBytes) + 2*limitChunk}
		rd.dec = json.NewDecoder(rd.lim)
		rd.dec.DisallowUnknownFields()
	} else {
		rd.lines = lineReader{br: br, max: rd.opts.MaxLineBytes}
	}
	return rd, nil
}

// open unwraps gzip and a byte order mark and settles the format.
func (rd *Reader) open(r io.Reader) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, rd.opts.bufSize)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReaderSize(gz, rd.opts.bufSize)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	if rd.format == Auto {
		if rd.format, err = sniff(br); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
	}
	return br, nil
}

// Format returns the format being decoded: the one asked for, or the one
// Auto detected.
func (r *Reader) Format() Format { return r.format }

// Line returns the 1-based line (JSONL, TSV, CSV: the line on which the
// record starts) or array element (JSON) of the last record Next returned
// or of the last error. It is 0 before the first call.
func (r *Reader) Line() int { return r.line }

// Stopped reports whether Next has reached the end of the input or an error
// it cannot resume after; every later call returns that same result. A
// caller collecting several bad lines stops when Stopped is true.
func (r *Reader) Stopped() bool { return r.err != nil }

// Next decodes the next record into t, which it resets first. It returns
// io.EOF after the last record, or a *LineError for a bad record (the
// contents of t are then unspecified). After most errors the next call
// resumes with the following record; see Stopped.
func (r *Reader) Next(t *model.TripletInput) error {
	*t = model.TripletInput{}
	if r.err != nil {
		return r.err
	}
	switch r.format {
	case JSON:
		return r.nextJSON(t)
	case JSONL:
		return r.nextJSONL(t)
	case TSV:
		return r.nextTSV(t)
	case SPO:
		return r.nextSPO(t)
	case NTriples:
		return r.nextNTriples(t)
	default:
		return r.nextCSV(t)
	}
}

// fail records a line error; a fatal one becomes sticky.
func (r *Reader) fail(line int, err error, fatal bool) error {
	r.line = line
	le := &LineError{Line: line, Err: err}
	if fatal {
		r.err = le
	}
	return le
}

// readFailed turns an error of the lineReader into the Reader's result. A
// line that is too long was skipped, so the Reader can go on; EOF and I/O
// errors end it.
func (r *Reader) readFailed(err error) error {
	if err == io.EOF {
		r.err = io.EOF
		return io.EOF
	}
	if errors.Is(err, ErrLineTooLong) {
		return r.fail(r.lines.n, err, false)
	}
	return r.fail(r.lines.n+1, fmt.Errorf("read: %w", err), true)
}

// checkRequired enforces the one content rule of the Reader: the three
// names are present and not blank. Everything else is the job of
// model.ValidateTriplet.
func checkRequired(t *model.TripletInput) error {
	switch {
	case isBlank(t.Source):
		return errMissing("source")
	case isBlank(t.Relationship):
		return errMissing("relationship")
	case isBlank(t.Target):
		return errMissing("target")
	}
	return nil
}

func errMissing(field string) error {
	return detail(ErrMissingField, fmt.Sprintf("missing required field %q", field))
}

// isBlank reports whether s is empty after trimming Unicode white space,
// with an ASCII fast path because names almost never start with a space.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			continue
		case c < 0x80:
			return false
		default:
			return strings.TrimSpace(s[i:]) == ""
		}
	}
	return true
}

// isSpaceBytes reports whether b holds only ASCII white space (what JSON,
// TSV and CSV treat as blank).
func isSpaceBytes(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
			return false
		}
	}
	return true
}

// sniff decides the format from the first bytes of br without consuming
// them. It reads only as much as it needs, so a slow producer (a pipe, a
// streaming request body) is not made to fill a whole buffer first.
func sniff(br *bufio.Reader) (Format, error) {
	for {
		buf, _ := br.Peek(br.Buffered())
		if f, ok := decideFormat(buf, len(buf) >= br.Size()); ok {
			return f, nil
		}
		// Undecided: wait for at least one more byte, no more.
		if _, err := br.Peek(len(buf) + 1); err != nil {
			if err != io.EOF {
				return Auto, err
			}
			buf, _ = br.Peek(br.Buffered())
			f, _ := decideFormat(buf, true)
			return f, nil
		}
	}
}

// decideFormat implements the Auto rule on a prefix of the input. ok is
// false when the prefix does not decide yet and more input may change it;
// final says no more input will come (or the window is full).
func decideFormat(buf []byte, final bool) (Format, bool) {
	i := 0
	for i < len(buf) && isSpaceBytes(buf[i:i+1]) {
		i++
	}
	if i == len(buf) {
		// Nothing but white space: every format yields no records.
		return JSONL, final
	}
	switch buf[i] {
	case '[':
		return JSON, true
	case '{':
		return JSONL, true
	}
	// The first data line decides; comment lines (TSV) and blank lines
	// are skipped. A tab wins over a comma because TSV names and
	// descriptions often contain commas, never tabs.
	for len(buf) > 0 {
		nl := bytes.IndexByte(buf, '\n')
		line := buf
		complete := nl >= 0
		if complete {
			line, buf = buf[:nl], buf[nl+1:]
		} else {
			buf = nil
		}
		if isSpaceBytes(line) || line[0] == '#' {
			if !complete && !final {
				return Auto, false
			}
			continue
		}
		trimmed := bytes.TrimLeft(line, " ")
		switch {
		case bytes.IndexByte(line, '\t') >= 0 && !(trimmed[0] == '<' || bytes.HasPrefix(trimmed, []byte("_:"))):
			return TSV, true
		case trimmed[0] == '<' || bytes.HasPrefix(trimmed, []byte("_:")):
			return NTriples, true
		case !complete && !final:
			return Auto, false
		case bytes.Count(line, []byte{'|'}) >= 2:
			return SPO, true
		case bytes.IndexByte(line, ',') >= 0 || line[0] == '"':
			return CSV, true
		default:
			// A single column is wrong in both; TSV reports it per line.
			return TSV, true
		}
	}
	return TSV, final
}

// lineReader splits a stream into lines without copying those that fit the
// bufio buffer, and bounds the ones that do not.
type lineReader struct {
	br      *bufio.Reader
	max     int
	n       int    // lines read so far: the number of the last line
	long    []byte // scratch for lines longer than the buffer
	pending error  // an error seen after the last line, reported next
}

// next returns the next line without its "\n" and one "\r" before it (the
// encoding/csv rule, which also drops a lone "\r" at the end of the input).
// nl reports whether the line ended with "\n". The bytes are valid until the
// next call. A line longer than max is skipped and reported as an error
// wrapping ErrLineTooLong, with n set to its number.
func (l *lineReader) next() (line []byte, nl bool, err error) {
	if l.pending != nil {
		return nil, false, l.pending
	}
	b, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return l.nextLong(b)
	}
	if err != nil {
		// Remember err (EOF included) rather than trusting the source to
		// repeat it; after a last line without newline it is reported on
		// the next call.
		l.pending = err
		if len(b) == 0 {
			return nil, false, err
		}
	}
	l.n++
	line, nl = trimEOL(b)
	if len(line) > l.max {
		return nil, false, l.tooLong()
	}
	return line, nl, nil
}

func (l *lineReader) nextLong(b []byte) ([]byte, bool, error) {
	l.long = append(l.long[:0], b...)
	for {
		b, err := l.br.ReadSlice('\n')
		// +2 leaves room for the "\r\n" that trimEOL removes.
		if len(l.long)+len(b) > l.max+2 {
			for err == bufio.ErrBufferFull {
				_, err = l.br.ReadSlice('\n')
			}
			if err != nil {
				l.pending = err
			}
			l.n++
			return nil, false, l.tooLong()
		}
		l.long = append(l.long, b...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			l.pending = err
		}
		l.n++
		line, nl := trimEOL(l.long)
		if len(line) > l.max {
			return nil, false, l.tooLong()
		}
		return line, nl, nil
	}
}

func (l *lineReader) tooLong() error {
	return detail(ErrLineTooLong, fmt.Sprintf("line longer than %d bytes", l.max))
}

func trimEOL(b []byte) ([]byte, bool) {
	nl := false
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b, nl = b[:n-1], true
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nl
}

// limitChunk caps each read under the JSON decoder, so that the bytes it
// has read since an element began exceed that element's size by at most
// one chunk: the basis of the element size bound.
const limitChunk = 64 << 10

// limitReader sits under the JSON array decoder. It fails once more than
// max bytes were read since the last mark, which bounds the decoder's
// buffer (and so memory) whatever one element looks like, and it remembers
// I/O errors so that they can be told apart from JSON errors.
type limitReader struct {
	r   io.Reader
	n   int64 // bytes read since mark
	max int64
	err error // first non-EOF error returned, ours or the source's
}

func (l *limitReader) mark() { l.n = 0 }

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.n >= l.max {
		l.err = errElementTooLong
		return 0, l.err
	}
	if len(p) > limitChunk {
		p = p[:limitChunk]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}

var errElementTooLong = errors.New("element too long")
