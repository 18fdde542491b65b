package langs

import "errors"

// ErrUnknownLanguage: Extract was given a file of no language it reads.
var ErrUnknownLanguage = errors.New("langs: not a file of a language read")
