package treesitter

import "errors"

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnknownLanguage: no embedded grammar of that name.
	ErrUnknownLanguage = errors.New("treesitter: unknown language")
	// ErrTooLarge: a source over MaxSourceSize is not parsed.
	ErrTooLarge = errors.New("treesitter: source too large")
	// ErrParse: the module could not parse the source (out of its memory
	// limit, or stopped by the parse timeout); the instance that tried is
	// dropped.
	ErrParse = errors.New("treesitter: parse failed")
	// ErrQuery: a query does not compile (the message says where and
	// why), or uses a predicate whose arguments are malformed.
	ErrQuery = errors.New("treesitter: bad query")
	// ErrClosed: the runtime was closed.
	ErrClosed = errors.New("treesitter: runtime closed")
)
