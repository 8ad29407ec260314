package router

import (
	"bytes"
	"encoding/json"
)

// quoteSessionIDs encodes req as JSON with its session ids as strings:
// the integers at session_id, session_pool and consensus.session_pool
// become strings of the same digits. Everything else keeps its encoding;
// in particular, ids the caller put inside context or metadata are left
// alone.
func quoteSessionIDs(req any) (json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return body, nil // not an object: no session ids to quote
	}
	quoted := false
	if v, ok := top["session_id"]; ok {
		top["session_id"], quoted = quoteNumber(v), true
	}
	if v, ok := top["session_pool"]; ok {
		top["session_pool"], quoted = quoteNumbers(v), true
	}
	if v, ok := top["consensus"]; ok {
		var c map[string]json.RawMessage
		if json.Unmarshal(v, &c) == nil && c != nil {
			if p, ok := c["session_pool"]; ok {
				c["session_pool"] = quoteNumbers(p)
				top["consensus"], _ = json.Marshal(c) // a map of valid JSON values always encodes
				quoted = true
			}
		}
	}
	if !quoted {
		return body, nil
	}
	return json.Marshal(top)
}

// quoteNumber returns a JSON integer as a JSON string of its digits, and
// any other value as it is.
func quoteNumber(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return v
	}
	return json.RawMessage(`"` + string(v) + `"`)
}

// quoteNumbers applies quoteNumber to each element of a JSON array, and
// returns any other value as it is.
func quoteNumbers(v json.RawMessage) json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || items == nil {
		return v
	}
	for i, it := range items {
		items[i] = quoteNumber(it)
	}
	out, _ := json.Marshal(items) // valid JSON values always encode
	return out
}
