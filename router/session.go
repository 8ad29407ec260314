package router

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// SessionID identifies a session: the unit the router funds and routes work
// through. The interface writes it as a JSON integer; the public router's
// documentation writes session pools as strings of digits ("201"), so
// decoding accepts both and encoding writes the integer. Zero means "not
// set"; valid ids are positive.
type SessionID int64

// String returns the id in decimal.
func (id SessionID) String() string { return strconv.FormatInt(int64(id), 10) }

// UnmarshalJSON accepts a JSON integer or a string of decimal digits.
// Anything else (a fraction, an exponent, a plus sign, an empty string, a
// number out of range) is rejected with a *json.UnmarshalTypeError that encoding/json completes
// with the field path.
func (id *SessionID) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	digits := data
	if len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' {
		digits = data[1 : len(data)-1]
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil || digits[0] == '+' {
		return &json.UnmarshalTypeError{Value: truncate(string(data), 40), Type: reflect.TypeFor[SessionID]()}
	}
	*id = SessionID(n)
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
