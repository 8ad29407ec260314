package trusta2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
)

// The A2A 1.0 wire, as specification/a2a.proto of A2A v1.0 writes it in
// JSON (ProtoJSON: lowerCamelCase members, enums written by name and
// read by name or number, see enumName). The agent
// keeps its tasks as A2A 0.3 tasks, the SDK's type, whatever the version
// that made them; v1Task writes one in 1.0.

// v1Message is a Message.
type v1Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []v1Part       `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// v1Part is a Part: one of text, raw, url and data.
type v1Part struct {
	Text      *string         `json:"text,omitempty"`
	Raw       protoBytes      `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// protoBytes is a bytes field of ProtoJSON: written in standard base64
// with padding, read in standard or URL-safe base64, padded or not, as
// ProtoJSON's parsers read it.
type protoBytes []byte

// UnmarshalJSON reads a JSON string in any of ProtoJSON's base64 forms.
func (b *protoBytes) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") && len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	out, err := enc.Strict().DecodeString(s)
	if err != nil {
		return fmt.Errorf("expected a string of base64 (standard or URL-safe alphabet, padded or not): %v", err)
	}
	*b = out
	return nil
}

// v1Task is a Task.
type v1Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    v1TaskStatus   `json:"status"`
	Artifacts []v1Artifact   `json:"artifacts,omitempty"`
	History   []v1Message    `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// v1TaskStatus is a TaskStatus.
type v1TaskStatus struct {
	State     string     `json:"state"`
	Message   *v1Message `json:"message,omitempty"`
	Timestamp string     `json:"timestamp,omitempty"`
}

// v1Artifact is an Artifact.
type v1Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []v1Part       `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// The requests of the methods served, their params.
type (
	v1SendMessageRequest struct {
		Tenant        string           `json:"tenant,omitempty"`
		Message       *json.RawMessage `json:"message"`
		Configuration *json.RawMessage `json:"configuration,omitempty"`
		Metadata      map[string]any   `json:"metadata,omitempty"`
	}
	v1SendMessageConfiguration struct {
		AcceptedOutputModes        []string        `json:"acceptedOutputModes,omitempty"`
		TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig,omitempty"`
		HistoryLength              *int32          `json:"historyLength,omitempty"`
		ReturnImmediately          bool            `json:"returnImmediately,omitempty"`
	}
	v1GetTaskRequest struct {
		Tenant        string `json:"tenant,omitempty"`
		ID            string `json:"id"`
		HistoryLength *int32 `json:"historyLength,omitempty"`
	}
	v1CancelTaskRequest struct {
		Tenant   string         `json:"tenant,omitempty"`
		ID       string         `json:"id"`
		Metadata map[string]any `json:"metadata,omitempty"`
	}
	v1ListTasksRequest struct {
		Tenant               string          `json:"tenant,omitempty"`
		ContextID            string          `json:"contextId,omitempty"`
		Status               json.RawMessage `json:"status,omitempty"` // a name or a number
		PageSize             *int32          `json:"pageSize,omitempty"`
		PageToken            string          `json:"pageToken,omitempty"`
		HistoryLength        *int32          `json:"historyLength,omitempty"`
		StatusTimestampAfter string          `json:"statusTimestampAfter,omitempty"`
		IncludeArtifacts     bool            `json:"includeArtifacts,omitempty"`
	}
	v1ListTasksResponse struct {
		Tasks         []v1Task `json:"tasks"`
		NextPageToken string   `json:"nextPageToken"`
		PageSize      int32    `json:"pageSize"`
		TotalSize     int32    `json:"totalSize"`
	}
)

// The roles and task states of 1.0, by their 0.3 names.
var (
	v1Roles  = map[a2a.MessageRole]string{a2a.MessageRoleUser: "ROLE_USER", a2a.MessageRoleAgent: "ROLE_AGENT"}
	v1States = map[a2a.TaskState]string{
		a2a.TaskStateSubmitted: "TASK_STATE_SUBMITTED", a2a.TaskStateWorking: "TASK_STATE_WORKING",
		a2a.TaskStateCompleted: "TASK_STATE_COMPLETED", a2a.TaskStateFailed: "TASK_STATE_FAILED",
		a2a.TaskStateCanceled: "TASK_STATE_CANCELED", a2a.TaskStateInputRequired: "TASK_STATE_INPUT_REQUIRED",
		a2a.TaskStateRejected: "TASK_STATE_REJECTED", a2a.TaskStateAuthRequired: "TASK_STATE_AUTH_REQUIRED",
	}
)

// decodeStrict decodes raw, the object at path, into v (a pointer to a
// struct), refusing a member v has none for, a value of the wrong type
// and malformed JSON with a *fieldViolation naming the member by its
// JSON field path.
func decodeStrict(path string, raw json.RawMessage, v any) error {
	if err := jsonbody.Unmarshal(raw, v); err != nil {
		return violationOf(path, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return &fieldViolation{Field: path, Description: "must be a JSON object"}
	}
	if errs := jsonbody.UnknownMembers(path, members, v); len(errs) > 0 {
		return &fieldViolation{Field: errs[0].Field, Description: errs[0].Message}
	}
	return nil
}

// enumName reads raw, the value of the enum member at field, as ProtoJSON
// does: a value's name (a JSON string), or its number (a JSON integer)
// of the enum whose names by number are names. A number the enum does not
// define is refused, and so is a value of another type; an absent value
// (or null) is "". A string is returned as it is, for the caller to check.
func enumName(field string, raw json.RawMessage, names []string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return name, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", &fieldViolation{Field: field, Description: "expected a string (an enum name) or an integer (its number), got " + jsonbody.Kind(raw)}
	}
	i, err := strconv.ParseInt(n.String(), 10, 32)
	if f, ferr := n.Float64(); err != nil && ferr == nil && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
		i, err = int64(f), nil // 1.0 and 1e0 are the integer 1
	}
	if err != nil || i < 0 || i >= int64(len(names)) {
		return "", &fieldViolation{Field: field, Description: fmt.Sprintf("is %s; allowed: %s, or their numbers 0 to %d",
			n, strings.Join(names, ", "), len(names)-1)}
	}
	return names[i], nil
}

// roleNames are the names of the 1.0 Role enum, by their numbers.
func roleNames() []string { return []string{"ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"} }

// v1MessageIn reads the message of a SendMessage request (the object at
// params.message) as the 0.3 message the executor reads: a text part is
// a TextPart, a data part holding an object a DataPart; a raw or url part
// (a file) is refused, named by its index.
func v1MessageIn(raw *json.RawMessage) (*a2a.Message, error) {
	if raw == nil || bytes.Equal(bytes.TrimSpace(*raw), []byte("null")) {
		return nil, &fieldViolation{Field: "message", Description: "is required"}
	}
	// Each part is decoded apart, so that an error names its index.
	var m struct {
		v1Message
		Role  json.RawMessage   `json:"role"` // a name or a number
		Parts []json.RawMessage `json:"parts"`
	}
	if err := decodeStrict("message", *raw, &m); err != nil {
		return nil, err
	}
	if m.MessageID == "" {
		return nil, &fieldViolation{Field: "message.messageId", Description: "is required"}
	}
	role, err := enumName("message.role", m.Role, roleNames())
	if err != nil {
		return nil, err
	}
	if role != "ROLE_USER" {
		return nil, &fieldViolation{Field: "message.role", Description: fmt.Sprintf("is %q; a client's message is ROLE_USER", role)}
	}
	if len(m.Parts) == 0 {
		return nil, &fieldViolation{Field: "message.parts", Description: "at least one part is required"}
	}
	msg := &a2a.Message{ID: m.MessageID, ContextID: m.ContextID, TaskID: a2a.TaskID(m.TaskID), Role: a2a.MessageRoleUser,
		Metadata: m.Metadata, Extensions: m.Extensions}
	for _, id := range m.ReferenceTaskIDs {
		msg.ReferenceTasks = append(msg.ReferenceTasks, a2a.TaskID(id))
	}
	for i, rp := range m.Parts {
		path := fmt.Sprintf("message.parts[%d]", i)
		var p v1Part
		if err := decodeStrict(path, rp, &p); err != nil {
			return nil, err
		}
		part, err := p.in(path)
		if err != nil {
			return nil, err
		}
		msg.Parts = append(msg.Parts, part)
	}
	return msg, nil
}

// in returns p, the part at path, as a 0.3 part.
func (p v1Part) in(path string) (a2a.Part, error) {
	var set []string
	if p.Text != nil {
		set = append(set, "text")
	}
	if p.Raw != nil {
		set = append(set, "raw")
	}
	if p.URL != "" {
		set = append(set, "url")
	}
	if len(p.Data) > 0 {
		set = append(set, "data")
	}
	if len(set) != 1 {
		return nil, &fieldViolation{Field: path, Description: fmt.Sprintf("holds %s: a part holds one of text, raw, url and data", orNone(set))}
	}
	if p.MediaType != "" && !readable(set[0], p.MediaType) {
		desc := fmt.Sprintf("is %q; the agent reads text (text/plain) and JSON (application/json)", p.MediaType)
		if set[0] == "data" {
			desc = fmt.Sprintf("is %q; a data part is JSON: application/json (leave it out, or name a JSON type)", p.MediaType)
		}
		return nil, &mediaTypeError{mediaType: p.MediaType, violation: &fieldViolation{Field: path + ".mediaType", Description: desc}}
	}
	switch set[0] {
	case "text":
		return a2a.TextPart{Text: *p.Text, Metadata: p.Metadata}, nil
	case "raw", "url":
		return nil, &fieldViolation{Field: path + "." + set[0], Description: "a file part is not read: send a text part or a data part"}
	}
	data, err := objectOf(p.Data)
	if err != nil || data == nil {
		return nil, &fieldViolation{Field: path + ".data", Description: "must be a JSON object of the skill's arguments, got " + truncate(string(p.Data))}
	}
	return a2a.DataPart{Data: data, Metadata: p.Metadata}, nil
}

// readable reports whether the agent reads a part of kind (text, raw,
// url or data) whose content is of mediaType: a data part's content is
// JSON, a text part's (and a file's, which is refused otherwise) text or
// JSON, the card's input modes. A data part naming another type
// (text/html) is not what the agent reads.
func readable(kind, mediaType string) bool {
	if httpapi.IsJSON(mediaType) {
		return true
	}
	mt, _, err := mime.ParseMediaType(mediaType)
	return kind != "data" && err == nil && strings.HasPrefix(mt, "text/")
}

// mediaTypeError is a part whose mediaType the agent does not read:
// ContentTypeNotSupported, its violation naming the part's mediaType.
type mediaTypeError struct {
	mediaType string
	violation *fieldViolation
}

func (e *mediaTypeError) Error() string { return e.violation.Error() }
func (e *mediaTypeError) Unwrap() error { return e.violation }

func orNone(set []string) string {
	if len(set) == 0 {
		return "none"
	}
	return strings.Join(set, " and ")
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}

// v1TaskOf writes task in 1.0, with at most historyLength messages of its
// history (all when nil) and its artifacts when artifacts is true.
func v1TaskOf(task *a2a.Task, historyLength *int32, artifacts bool) v1Task {
	t := v1Task{ID: string(task.ID), ContextID: task.ContextID, Metadata: task.Metadata,
		Status: v1TaskStatus{State: v1State(task.Status.State), Message: v1MessageOf(task.Status.Message)}}
	if ts := task.Status.Timestamp; ts != nil {
		t.Status.Timestamp = ts.UTC().Format(time.RFC3339Nano)
	}
	history := task.History
	if historyLength != nil && int(*historyLength) < len(history) {
		history = history[len(history)-max(int(*historyLength), 0):]
	}
	for _, m := range history {
		t.History = append(t.History, *v1MessageOf(m))
	}
	if artifacts {
		for _, a := range task.Artifacts {
			t.Artifacts = append(t.Artifacts, v1Artifact{ArtifactID: string(a.ID), Name: a.Name, Description: a.Description,
				Parts: v1PartsOf(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions})
		}
	}
	return t
}

// v1State is the 1.0 name of state.
func v1State(state a2a.TaskState) string {
	if s, ok := v1States[state]; ok {
		return s
	}
	return "TASK_STATE_UNSPECIFIED"
}

// v1MessageOf writes m in 1.0; nil stays nil.
func v1MessageOf(m *a2a.Message) *v1Message {
	if m == nil {
		return nil
	}
	role, ok := v1Roles[m.Role]
	if !ok {
		role = "ROLE_UNSPECIFIED"
	}
	out := &v1Message{MessageID: m.ID, ContextID: m.ContextID, TaskID: string(m.TaskID), Role: role,
		Parts: v1PartsOf(m.Parts), Metadata: m.Metadata, Extensions: m.Extensions}
	for _, id := range m.ReferenceTasks {
		out.ReferenceTaskIDs = append(out.ReferenceTaskIDs, string(id))
	}
	return out
}

// v1PartsOf writes parts in 1.0: a data part with mediaType
// application/json, a text part as text, a file part as raw or url.
func v1PartsOf(parts a2a.ContentParts) []v1Part {
	out := make([]v1Part, 0, len(parts))
	for _, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			out = append(out, v1Part{Text: &p.Text, Metadata: p.Metadata})
		case a2a.DataPart:
			data, err := json.Marshal(p.Data)
			if err != nil { // a task's data came from JSON: never
				data = []byte("null")
			}
			out = append(out, v1Part{Data: data, Metadata: p.Metadata, MediaType: "application/json"})
		case a2a.FilePart:
			switch f := p.File.(type) {
			case a2a.FileBytes:
				raw, _ := base64.StdEncoding.DecodeString(f.Bytes) // 0.3 writes bytes in base64
				out = append(out, v1Part{Raw: raw, MediaType: f.MimeType, Filename: f.Name, Metadata: p.Metadata})
			case a2a.FileURI:
				out = append(out, v1Part{URL: f.URI, MediaType: f.MimeType, Filename: f.Name, Metadata: p.Metadata})
			}
		}
	}
	return out
}
