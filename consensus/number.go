package consensus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseNumber returns the number an answer holds, for the numeric
// strategies (StrategyMedian, StrategyMedianOfMeans). An answer holds a
// number when it is:
//
//   - a JSON number (a json.RawMessage such as 18, -0.5 or 1e3, with white
//     space around it allowed), or a Go number that encodes as one; or
//   - a string (a Go string, or a JSON string in a json.RawMessage) that,
//     trimmed of white space, is written as a JSON number.
//
// That is the whole rule: an optional minus sign, digits, an optional
// fraction and exponent. No plus sign, thousands separator, currency
// sign, unit, word, hexadecimal, NaN or infinity is read: "+5", "1,000",
// "$18", "18 km", "about 18", "0x10" and "Infinity" hold no number, and a
// caller that wants them read normalizes its workers' answers first. A
// number beyond the range of a double (1e400) holds none either. So 18,
// 18.0, 1.8e1, "18" and " 18 " all hold 18.
//
// The error, which wraps ErrNotNumber, says why an answer holds none.
func ParseNumber(answer any) (float64, error) {
	var raw []byte
	switch a := answer.(type) {
	case json.RawMessage:
		raw = a
	case string:
		return parseNumberText(a)
	case nil:
		return 0, fmt.Errorf("%w: no output", ErrNotNumber)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return 0, fmt.Errorf("%w: %T does not encode as JSON: %v", ErrNotNumber, a, err)
		}
		raw = b
	}
	raw = bytes.Trim(raw, jsonSpace) // JSON's whitespace, not all of Unicode's
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("%w: not one JSON value", ErrNotNumber)
		}
		return parseNumberText(s)
	}
	if !isJSONNumber(raw) {
		return 0, fmt.Errorf("%w: a JSON %s", ErrNotNumber, jsonKind(raw))
	}
	return parseFloat(string(raw))
}

// jsonSpace is the whitespace JSON allows around a value.
const jsonSpace = " \t\n\r"

// parseNumberText reads the number a string holds.
func parseNumberText(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if !isJSONNumber([]byte(t)) {
		return 0, fmt.Errorf("%w: the string %s is not written as one JSON number", ErrNotNumber, quoteShort(s))
	}
	return parseFloat(t)
}

// parseFloat parses a JSON number, refusing one beyond a double's range.
func parseFloat(s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%w: %s is beyond the range of a double", ErrNotNumber, quoteShort(s))
	}
	return x, nil
}

// isJSONNumber reports whether b is one JSON number: a JSON value that
// starts as only a number can.
func isJSONNumber(b []byte) bool {
	return len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') && json.Valid(b)
}

// jsonKind names the kind of the JSON value that starts raw.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "empty output"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value that is not valid JSON"
}

// quoteShort quotes s, cut to 40 bytes, for an error message.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
