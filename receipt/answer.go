package receipt

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// RuleErrorAnswer is the rule of the schema failure of data that is not
// a receipt but a server's error answer, an RFC 9457 problem body: what
// `curl -s URL > FILE` writes when the request failed (a wrong key, a
// payment asked for, an unknown receipt id).
const RuleErrorAnswer = "error_answer"

// errorAnswer returns the schema failure of data, the text given as a
// receipt (or a JSON string holding it), when it is a server's error
// answer and no receipt: a JSON object with a numeric status from 400 to
// 599, a title, and no receipt_id. Its message names the answer's
// status, title, code and detail, which say what to fix in the request
// that fetched it. It returns nil for any other data.
func errorAnswer(data []byte) *SchemaError {
	text := bytes.TrimSpace(data)
	if len(text) > 0 && text[0] == '"' {
		var s string
		if json.Unmarshal(text, &s) != nil {
			return nil
		}
		text = bytes.TrimSpace([]byte(s))
	}
	var p struct {
		Title     string          `json:"title"`
		Status    int             `json:"status"`
		Detail    string          `json:"detail"`
		Code      string          `json:"code"`
		ReceiptID json.RawMessage `json:"receipt_id"`
	}
	if len(text) == 0 || text[0] != '{' || json.Unmarshal(text, &p) != nil ||
		p.Status < 400 || p.Status > 599 || p.Title == "" || p.ReceiptID != nil {
		return nil
	}
	msg := fmt.Sprintf("is an error answer of a server (an RFC 9457 problem), not a receipt: %d %s", p.Status, p.Title)
	if p.Code != "" {
		msg += " (" + p.Code + ")"
	}
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	return &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: RuleErrorAnswer, Message: msg}}}
}
