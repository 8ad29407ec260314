package receipt

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"

	"github.com/vouchkit/vouch/internal/jsonbody"
)

// decodeVerifyRequest decodes body, the verify_receipt request, into req
// with the errors of jsonbody.UnmarshalKnown, except inside a receipt
// given as an object: what a request body may not hold there (a repeated
// member name, a lone UTF-16 surrogate, deep nesting) is the receipt's
// own fault, which its schema check reports, as it does for the same
// text given as a string. Everything around the receipt, and a body that
// is not UTF-8 JSON, keeps the errors of a request body.
func decodeVerifyRequest(body []byte, req *VerifyRequest) error {
	spans, ok := receiptObjects(body)
	if !ok || len(spans) == 0 {
		return jsonbody.UnmarshalKnown(body, req)
	}
	// Check the envelope with each receipt object replaced by {}.
	masked := make([]byte, 0, len(body))
	var last int64
	for _, s := range spans {
		masked = append(masked, body[last:s[0]]...)
		masked = append(masked, "{}"...)
		last = s[1]
	}
	masked = append(masked, body[last:]...)
	if err := jsonbody.UnmarshalKnown(masked, req); err != nil {
		return err
	}
	s := spans[len(spans)-1] // the only one: UnmarshalKnown refuses a repeated member
	req.Receipt = json.RawMessage(body[s[0]:s[1]])
	return nil
}

// receiptObjects returns the byte ranges in body of the values of its
// members named "receipt" that are objects, and reports whether body is
// one JSON object in valid UTF-8 that encoding/json reads.
func receiptObjects(body []byte) ([][2]int64, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var spans [][2]int64
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		if t == "receipt" && len(raw) > 0 && raw[0] == '{' {
			end := dec.InputOffset()
			spans = append(spans, [2]int64{end - int64(len(raw)), end})
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return spans, true
}
