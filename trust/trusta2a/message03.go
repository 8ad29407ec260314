package trusta2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/vouchkit/vouch/internal/jsonbody"
)

// The message of a version 0.3 message/send, as the specification's
// JSON schema writes it, read before the SDK decodes it: the SDK skips a
// member it has no field for and takes any role, and it answers a part
// of no known kind as a parse error, and a data part it cannot hold
// without the part's index.

// message03 is a Message.
type message03 struct {
	Kind             string            `json:"kind,omitempty"`
	MessageID        string            `json:"messageId"`
	ContextID        string            `json:"contextId,omitempty"`
	TaskID           string            `json:"taskId,omitempty"`
	Role             string            `json:"role"`
	Parts            []json.RawMessage `json:"parts"`
	Metadata         map[string]any    `json:"metadata,omitempty"`
	Extensions       []string          `json:"extensions,omitempty"`
	ReferenceTaskIDs []string          `json:"referenceTaskIds,omitempty"`
}

// The parts of kind text, data and file.
type (
	textPart03 struct {
		Kind     string         `json:"kind"`
		Text     string         `json:"text"`
		Metadata map[string]any `json:"metadata,omitempty"`
	}
	dataPart03 struct {
		Kind     string          `json:"kind"`
		Data     json.RawMessage `json:"data"`
		Metadata map[string]any  `json:"metadata,omitempty"`
	}
	filePart03 struct {
		Kind     string          `json:"kind"`
		File     json.RawMessage `json:"file"`
		Metadata map[string]any  `json:"metadata,omitempty"`
	}
	file03 struct {
		Bytes    string `json:"bytes,omitempty"`
		URI      string `json:"uri,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
		Name     string `json:"name,omitempty"`
	}
)

// readMessage03 refuses the message of a message/send (raw, at
// params.message) that the specification does not allow or the SDK
// cannot hold, naming the member at fault: a member the message or its
// part does not have (params.message.contxtId), a kind other than
// "message", no messageId, a role other than a client's ("user"), a
// part of a kind other than text, data and file
// (params.message.parts[1].kind), a data part whose data is not an
// object, a number no float64 holds in a data part's data
// (params.message.parts[0].data.tolerance.absolute) or in the metadata
// of the message or a part (params.message.parts[0].metadata.x), and a
// file part with neither or both of bytes and uri.
func readMessage03(raw json.RawMessage) *fieldViolation {
	const path = "params.message"
	var m message03
	if err := decodeStrict(path, raw, &m); err != nil {
		return violationOf(path, err)
	}
	if m.Kind != "" && m.Kind != "message" {
		return &fieldViolation{Field: path + ".kind", Description: fmt.Sprintf("is %q; a message's kind is \"message\"", m.Kind)}
	}
	if m.MessageID == "" {
		return &fieldViolation{Field: path + ".messageId", Description: "is required"}
	}
	if m.Role != "user" {
		return &fieldViolation{Field: path + ".role", Description: fmt.Sprintf("is %q; a client's message is \"user\"", m.Role)}
	}
	for i, rp := range m.Parts {
		if v := readPart03(fmt.Sprintf("%s.parts[%d]", path, i), rp); v != nil {
			return v
		}
	}
	return finite(path+".metadata", m.Metadata)
}

// readPart03 refuses the part at path that its kind does not allow.
func readPart03(path string, raw json.RawMessage) *fieldViolation {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := jsonbody.Unmarshal(raw, &kind); err != nil {
		return violationOf(path, err)
	}
	switch kind.Kind {
	case "text":
		var p textPart03
		if err := decodeStrict(path, raw, &p); err != nil {
			return violationOf(path, err)
		}
		return finite(path+".metadata", p.Metadata)
	case "data":
		var p dataPart03
		if err := decodeStrict(path, raw, &p); err != nil {
			return violationOf(path, err)
		}
		if len(p.Data) == 0 || bytes.Equal(bytes.TrimSpace(p.Data), []byte("null")) {
			return &fieldViolation{Field: path + ".data", Description: "is required: a JSON object of the skill's arguments"}
		}
		var data map[string]any
		if err := jsonbody.Unmarshal(p.Data, &data); err != nil {
			return violationOf(path+".data", err)
		}
		// The SDK holds the data's numbers as float64s.
		if v := finite(path+".data", data); v != nil {
			return v
		}
		return finite(path+".metadata", p.Metadata)
	case "file":
		var p filePart03
		if err := decodeStrict(path, raw, &p); err != nil {
			return violationOf(path, err)
		}
		var f file03
		if err := decodeStrict(path+".file", p.File, &f); err != nil {
			return violationOf(path+".file", err)
		}
		if (f.Bytes == "") == (f.URI == "") {
			return &fieldViolation{Field: path + ".file", Description: "holds one of bytes and uri"}
		}
		return finite(path+".metadata", p.Metadata)
	default:
		return &fieldViolation{Field: path + ".kind", Description: fmt.Sprintf("is %q; a part's kind is text, data or file", kind.Kind)}
	}
}

// finite refuses the first number of v, the value at path (decoded with
// json.Number), that no float64 holds, which the SDK cannot decode; nil
// when every number fits.
func finite(path string, v any) *fieldViolation {
	if at, n := outOfRange(path, v); at != "" {
		return &fieldViolation{Field: at, Description: fmt.Sprintf("number %s is out of range: must be a finite number", n)}
	}
	return nil
}

// numbersOf returns raw, JSON, decoded with json.Number for its numbers,
// for outOfRange; nil when raw does not decode.
func numbersOf(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// outOfRange returns the path, under path, of the first number of v (a
// JSON value decoded with json.Number, members in the order of their
// names) that no float64 holds, and the number; "" when every number
// fits.
func outOfRange(path string, v any) (string, json.Number) {
	switch v := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(v), 64); err != nil {
			return path, v
		}
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(v)) {
			if at, n := outOfRange(jsonbody.MemberPath(path, name), v[name]); at != "" {
				return at, n
			}
		}
	case []any:
		for i, e := range v {
			if at, n := outOfRange(fmt.Sprintf("%s[%d]", path, i), e); at != "" {
				return at, n
			}
		}
	}
	return "", ""
}
