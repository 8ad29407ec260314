package trusta2a

import (
	"context"
	"encoding/json"

	"github.com/a2aproject/a2a-go/a2a"
)

// sentKey is the key of a version 0.3 message as sent, in the context
// the handler gives the SDK.
type sentKey struct{}

// sentMessage is a version 0.3 message/send's message as sent: its id
// and the data of each of its data parts, as written.
type sentMessage struct {
	id   string
	data []json.RawMessage
}

// withSentData returns ctx carrying the message of params, a version 0.3
// message/send's, as sent, so that the executor reads its data part as
// written (sentData): the SDK decodes a data part's numbers as float64s,
// which hold neither 12345678901234567891 nor 1e400 (see objectOf).
func withSentData(ctx context.Context, params json.RawMessage) context.Context {
	var p struct {
		Message struct {
			ID    string `json:"messageId"`
			Parts []struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			} `json:"parts"`
		} `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ctx // the SDK refuses it
	}
	m := sentMessage{id: p.Message.ID}
	for _, part := range p.Message.Parts {
		if part.Kind == "data" {
			m.data = append(m.data, part.Data)
		}
	}
	return context.WithValue(ctx, sentKey{}, m)
}

// sentData returns the data of each data part of msg as sent, when ctx
// carries msg as sent (withSentData), and nil otherwise.
func sentData(ctx context.Context, msg *a2a.Message) []json.RawMessage {
	m, ok := ctx.Value(sentKey{}).(sentMessage)
	if !ok || msg == nil || msg.ID != m.id {
		return nil
	}
	return m.data
}
