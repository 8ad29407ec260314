package trusta2a

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/a2a"
)

// decodeTask reads raw, a task as json.Marshal writes it, as decoding
// it into an a2a.Task would, except that the numbers of its free-form
// objects (a data part's data; the metadata of the task, of its
// messages, artifacts and parts) are json.Numbers, as written. Decoding
// alone would read them as float64s: a kept task would answer
// 12345678901234567891 as 12345678901234567000, and a task holding
// 1e400, which no float64 holds, could not be read at all.
func decodeTask(raw []byte) (*a2a.Task, error) {
	var in taskJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	task := in.Task
	var err error
	if task.Metadata, err = freeForm(in.Metadata); err != nil {
		return nil, err
	}
	task.Status = in.Status.TaskStatus
	if task.Status.Message, err = in.Status.Message.read(); err != nil {
		return nil, err
	}
	task.History = make([]*a2a.Message, 0, len(in.History))
	for _, m := range in.History {
		msg, err := m.read()
		if err != nil {
			return nil, err
		}
		task.History = append(task.History, msg)
	}
	task.Artifacts = make([]*a2a.Artifact, 0, len(in.Artifacts))
	for _, a := range in.Artifacts {
		art, err := a.read()
		if err != nil {
			return nil, err
		}
		task.Artifacts = append(task.Artifacts, art)
	}
	return &task, nil
}

// taskJSON decodes a task, keeping its free-form objects as JSON: each
// member below stands for the a2a.Task member of its name.
type taskJSON struct {
	a2a.Task
	Metadata json.RawMessage `json:"metadata"`
	Status   struct {
		a2a.TaskStatus
		Message *messageJSON `json:"message"`
	} `json:"status"`
	History   []*messageJSON  `json:"history"`
	Artifacts []*artifactJSON `json:"artifacts"`
}

// messageJSON decodes a message as taskJSON decodes a task.
type messageJSON struct {
	a2a.Message
	Metadata json.RawMessage   `json:"metadata"`
	Parts    []json.RawMessage `json:"parts"`
}

// read returns the message m decodes; nil for none.
func (m *messageJSON) read() (*a2a.Message, error) {
	if m == nil {
		return nil, nil
	}
	msg := m.Message
	var err error
	if msg.Metadata, err = freeForm(m.Metadata); err != nil {
		return nil, err
	}
	msg.Parts, err = readParts(m.Parts)
	return &msg, err
}

// artifactJSON decodes an artifact as taskJSON decodes a task.
type artifactJSON struct {
	a2a.Artifact
	Metadata json.RawMessage   `json:"metadata"`
	Parts    []json.RawMessage `json:"parts"`
}

// read returns the artifact a decodes; nil for none.
func (a *artifactJSON) read() (*a2a.Artifact, error) {
	if a == nil {
		return nil, nil
	}
	art := a.Artifact
	var err error
	if art.Metadata, err = freeForm(a.Metadata); err != nil {
		return nil, err
	}
	art.Parts, err = readParts(a.Parts)
	return &art, err
}

// readParts reads the JSON of parts, their numbers as written.
func readParts(raws []json.RawMessage) (a2a.ContentParts, error) {
	if raws == nil {
		return nil, nil
	}
	parts := make(a2a.ContentParts, len(raws))
	for i, raw := range raws {
		var err error
		if parts[i], err = readPart(raw); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// readPart reads the JSON of a part, the numbers of its data and
// metadata as written.
func readPart(raw json.RawMessage) (a2a.Part, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, err
	}
	meta, err := freeForm(members["metadata"])
	if err != nil {
		return nil, err
	}
	delete(members, "metadata")
	var kind string
	if json.Unmarshal(members["kind"], &kind) == nil && kind == "data" {
		data, err := freeForm(members["data"])
		return a2a.DataPart{Data: data, Metadata: meta}, err
	}
	rest, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	var one a2a.ContentParts
	if err := json.Unmarshal(append(append([]byte{'['}, rest...), ']'), &one); err != nil {
		return nil, err
	}
	switch p := one[0].(type) {
	case a2a.TextPart:
		p.Metadata = meta
		return p, nil
	case a2a.FilePart:
		p.Metadata = meta
		return p, nil
	}
	return one[0], nil
}

// freeForm reads a free-form object, its numbers as written; nil for
// none.
func freeForm(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	return objectOf(raw)
}
