package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// decodeJSON reads the request body into v: one JSON value, nothing after
// it. Malformed JSON or a wrongly typed field is a 400 naming the problem;
// so is a body that is not valid UTF-8 (encoding/json would quietly turn
// the bad bytes into U+FFFD and store them).
func decodeJSON(c echo.Context, v any) error {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if !utf8.Valid(raw) {
		return apiErr(http.StatusBadRequest, "invalid_utf8", "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apiErr(http.StatusBadRequest, "malformed_json", "unexpected data after the JSON body")
	}
	return nil
}

func jsonError(err error) error {
	var mb *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mb):
		return err
	case errors.Is(err, io.EOF):
		return apiErr(http.StatusBadRequest, "malformed_json", "the request body is empty; a JSON object is expected")
	case errors.As(err, &se):
		return apiErr(http.StatusBadRequest, "malformed_json", "malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return apiErr(http.StatusBadRequest, "invalid_field", "field %q must be %s, not %s", field, te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apiErr(http.StatusBadRequest, "malformed_json", "truncated JSON body")
	}
	return apiErr(http.StatusBadRequest, "malformed_json", "malformed JSON: %v", err)
}

func fieldError(format string, a ...any) *Error {
	return apiErr(http.StatusBadRequest, "invalid_field", format, a...)
}
