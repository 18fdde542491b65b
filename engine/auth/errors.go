package auth

import "errors"

// ErrUnauthorized: the token is unknown. Invalid input to PutToken wraps
// engine.ErrInvalidInput.
var ErrUnauthorized = errors.New("auth: unknown token")
