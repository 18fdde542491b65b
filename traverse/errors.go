package traverse

import "errors"

// ErrInvalidOptions: an Options field is outside its range.
var ErrInvalidOptions = errors.New("traverse: invalid options")
