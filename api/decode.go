package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/internal/suggest"
)

// decodeJSON reads the request body into v: one JSON value, nothing after
// it. Malformed JSON, a wrongly typed field or a field v does not have (a
// typo such as "budget" for "budgetTokens" would otherwise be dropped
// silently and the default used) is a 400 naming the problem; so is a body
// that is not valid UTF-8 (encoding/json would quietly turn the bad bytes
// into U+FFFD and store them).
func decodeJSON(c echo.Context, v any) error {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if !utf8.Valid(raw) {
		return apiErr(http.StatusBadRequest, "invalid_utf8", "the request body is not valid UTF-8")
	}
	return strictUnmarshal(raw, v)
}

// strictUnmarshal decodes one JSON value from raw into v, refusing unknown
// fields and trailing data.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, v)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apiErr(http.StatusBadRequest, "malformed_json", "unexpected data after the JSON body")
	}
	return nil
}

// jsonError maps a decoding error into v to the API's 400 answer.
func jsonError(err error, v any) error {
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		msg := fmt.Sprintf("unknown field %q in the request body", name)
		if s := suggest.Field(name, v); s == name {
			// The name is right but the level is not: say where it goes.
			if ps := suggest.Paths(name, v); len(ps) > 0 {
				msg = fmt.Sprintf("unknown field %q where it was given; the request body has it as %s", name, strings.Join(ps, ", "))
			}
		} else if s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return apiErr(http.StatusBadRequest, "unknown_field", "%s", msg)
	}
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
