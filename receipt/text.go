package receipt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// canonicalText returns the RFC 8785 canonical form of data, the JSON text
// of a receipt as any JSON writer wrote it (member order, white space,
// escapes and number spellings are free) or a JSON string holding that
// text, and reports whether data was that form already: the bytes as
// issued.
//
// A number whose canonical form is another number fails with the rule
// "number": RFC 8785 writes a number as the IEEE 754 double nearest to it,
// so an integer beyond 2^53 or a decimal with more digits than a double
// holds would be signed as another value, and two texts that mean
// different numbers would share one signature.
func canonicalText(data []byte) (canon []byte, asIssued bool, err error) {
	inner := data // the receipt's text
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '"' {
		var s string
		if err := jsonv2.Unmarshal(t, &s); err != nil {
			return nil, false, &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: "json",
				Message: "a string that is not valid JSON text: " + err.Error()}}}
		}
		inner = []byte(s)
	}
	text := bytes.TrimSpace(inner)
	if len(text) == 0 || text[0] != '{' {
		return nil, false, &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: "json",
			Message: "must be the receipt object, or a string holding its JSON"}}}
	}
	canon, err = canonicalForm(text)
	if err != nil {
		return nil, false, err
	}
	asIssued = bytes.Equal(canon, inner)
	// A text in canonical form already writes each number as its
	// canonical form does: nothing to compare.
	if !bytes.Equal(canon, text) {
		if err := exactNumbers(text); err != nil {
			return nil, false, err
		}
	}
	return canon, asIssued, nil
}

// canonicalForm returns the canonical form of data, or a *SchemaError.
// A repeated member name and invalid UTF-8, which RFC 8785 gives no
// canonical form, fail with the rule "jcs" at the member: encoding/json
// keeps the last of repeated names, while another reader may keep the
// first, so the receipt must have one reading. Any other failure (data is
// not JSON, a number beyond the range of a double) has the errors of
// decoding data as a receipt, which name the field.
func canonicalForm(data []byte) ([]byte, error) {
	canon, err := canonicalize(data)
	if err == nil {
		return canon, nil
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		field := fieldPath(syn.JSONPointer)
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			return nil, &SchemaError{Fields: []FieldError{{Field: field, Rule: "jcs",
				Message: fmt.Sprintf("member %q appears more than once in the object: RFC 8785 gives it no canonical form, and readers differ on which one they keep", truncate(syn.JSONPointer.LastToken(), 80))}}}
		case invalidUTF8At(data, syn.ByteOffset):
			return nil, &SchemaError{Fields: []FieldError{{Field: field, Rule: "jcs",
				Message: fmt.Sprintf("holds invalid UTF-8 at byte offset %d: RFC 8785 gives it no canonical form", syn.ByteOffset)}}}
		}
	}
	if _, derr := decode(data); derr != nil {
		return nil, derr // names the field: a wrong type, a number out of range
	}
	return nil, &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: "jcs", Message: err.Error()}}}
}

// invalidUTF8At reports whether the bytes of data at offset begin no
// valid UTF-8 character.
func invalidUTF8At(data []byte, offset int64) bool {
	if offset < 0 || offset >= int64(len(data)) {
		return false
	}
	r, size := utf8.DecodeRune(data[offset:])
	return r == utf8.RuneError && size <= 1
}

// exactNumbers fails with a *SchemaError (rule "number") naming the first
// number of the JSON text data whose value its RFC 8785 form does not
// carry exactly. data is valid JSON.
func exactNumbers(data []byte) error {
	err := eachNumber(data, func(text string, at jsontext.Pointer) error {
		f, _ := strconv.ParseFloat(text, 64) // canonicalForm refused one out of range
		canon := strconv.FormatFloat(f, 'g', -1, 64)
		if sameDecimal(text, canon) {
			return nil
		}
		if v := jsontext.Value(canon); v.Canonicalize() == nil {
			canon = string(v) // as RFC 8785 writes it
		}
		return &SchemaError{Fields: []FieldError{{Field: fieldPath(at), Rule: "number",
			Message: fmt.Sprintf("%s cannot be carried exactly: its RFC 8785 form is %s (an integer beyond 2^53, or more digits than a double holds); pass the number as issued", truncate(text, 40), canon)}}}
	})
	var se *SchemaError
	if err != nil && !errors.As(err, &se) {
		return &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: "json", Message: err.Error()}}}
	}
	return err
}

// eachNumber calls f with the text and the place of every number of the
// JSON text data, in order, and returns the first error f or the decoder
// returns.
func eachNumber(data []byte, f func(text string, at jsontext.Pointer) error) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if tok.Kind() == '0' {
			if err := f(tok.String(), dec.StackPointer()); err != nil {
				return err
			}
		}
	}
}

// sameDecimal reports whether the JSON numbers a and b denote the same
// decimal value.
func sameDecimal(a, b string) bool {
	an, ad, ae, aok := decimal(a)
	bn, bd, be, bok := decimal(b)
	return aok && bok && an == bn && ad == bd && ae == be
}

// decimal returns the value of the JSON number s as neg, digits and exp:
// ±0.digits × 10^exp with digits free of leading and trailing zeros (zero
// is "", exponent 0, not negative). It reports false for a non-zero
// number whose exponent lies beyond ±10^9, which no double reaches.
func decimal(s string) (neg bool, digits string, exp int, ok bool) {
	neg = strings.HasPrefix(s, "-")
	mant, e, hasExp := strings.Cut(strings.ToLower(strings.TrimPrefix(s, "-")), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	all := intPart + frac
	trimmed := strings.TrimLeft(all, "0")
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return false, "", 0, true
	}
	if hasExp {
		n, err := strconv.Atoi(strings.TrimPrefix(e, "+"))
		if err != nil || n > 1e9 || n < -1e9 {
			return false, "", 0, false
		}
		exp = n
	}
	exp += len(intPart) - (len(all) - len(trimmed))
	return neg, digits, exp, true
}

// fieldPath writes a JSON Pointer (RFC 6901) as the package's field paths:
// "/a/b/0" is "a.b[0]". A segment of digits is taken for an index.
func fieldPath(ptr jsontext.Pointer) string {
	var b strings.Builder
	for seg := range ptr.Tokens() {
		if _, err := strconv.Atoi(seg); err == nil && b.Len() > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	if b.Len() == 0 {
		return "(body)"
	}
	return b.String()
}
