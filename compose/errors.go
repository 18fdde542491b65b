package compose

import "errors"

// ErrInvalidRequest: a request field is out of range; the message names it.
var ErrInvalidRequest = errors.New("compose: invalid request")
