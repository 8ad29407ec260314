package trusta2a_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestSendMessage_v1MediaTypeNotRead: a part whose mediaType the agent
// does not read (a data part not JSON, a text or file part neither text
// nor JSON) is ContentTypeNotSupported (−32005), the error the
// specification names for it, with an ErrorInfo and a BadRequest naming
// the member; a text part of a text type is read.
func TestSendMessage_v1MediaTypeNotRead(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	msg := func(part string) string {
		return `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[` + part + `]}}`
	}
	for _, tt := range []struct {
		part, field string // field "": a result
	}{
		{`{"data":{"claim":"17 * 3 = 51"},"mediaType":"text/html"}`, "message.parts[0].mediaType"},
		{`{"data":{"claim":"17 * 3 = 51"},"mediaType":"application/json; charset=latin1"}`, "message.parts[0].mediaType"},
		{`{"text":"Is it true that 17 * 3 = 51?","mediaType":"image/png"}`, "message.parts[0].mediaType"},
		{`{"raw":"iVBORw0K","mediaType":"image/png"}`, "message.parts[0].mediaType"},
		{`{"url":"https://example.com/a.pdf","mediaType":"application/pdf"}`, "message.parts[0].mediaType"},
		{`{"text":"Is it true that 17 * 3 = 51?","mediaType":"text/plain"}`, ""},
		{`{"text":"Is it true that 17 * 3 = 51?","mediaType":"text/markdown"}`, ""},
	} {
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", msg(tt.part))
		if tt.field == "" {
			if rerr != nil {
				t.Errorf("%s: %+v, want a result", tt.part, rerr)
			}
			continue
		}
		if rerr == nil {
			t.Errorf("%s: %s, want error -32005", tt.part, res)
			continue
		}
		var reason, field any
		for _, d := range rerr.details() {
			switch d["@type"] {
			case "type.googleapis.com/google.rpc.ErrorInfo":
				reason = d["reason"]
			case "type.googleapis.com/google.rpc.BadRequest":
				if fv, _ := d["fieldViolations"].([]any); len(fv) == 1 {
					field = fv[0].(map[string]any)["field"]
				}
			}
		}
		if rerr.Code != -32005 || reason != "CONTENT_TYPE_NOT_SUPPORTED" || field != tt.field {
			t.Errorf("%s: %+v, want -32005 CONTENT_TYPE_NOT_SUPPORTED naming %s", tt.part, rerr, tt.field)
		}
	}
}

// TestSendMessage_v1ReferenceTaskIDs: the message's referenceTaskIds are
// kept with it, in the task's history, as SendMessage and GetTask answer
// it.
func TestSendMessage_v1ReferenceTaskIDs(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	first := f.send1(t, "demo-key", `[{"text":"Is it true that 17 * 3 = 51?"}]`)
	res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m2","role":"ROLE_USER",`+
		`"referenceTaskIds":["`+first.ID+`"],"parts":[{"text":"Is it true that 17 * 3 = 50?"}]}}`)
	if rerr != nil {
		t.Fatalf("SendMessage: %+v", rerr)
	}
	var sent struct {
		Task struct {
			ID      string `json:"id"`
			History []struct {
				ReferenceTaskIDs []string `json:"referenceTaskIds"`
			} `json:"history"`
		} `json:"task"`
	}
	if err := json.Unmarshal(res, &sent); err != nil {
		t.Fatal(err)
	}
	got, rerr := f.call1(t, "demo-key", "1.0", "GetTask", `{"id":"`+sent.Task.ID+`"}`)
	if rerr != nil {
		t.Fatalf("GetTask: %+v", rerr)
	}
	var read struct {
		History []struct {
			ReferenceTaskIDs []string `json:"referenceTaskIds"`
		} `json:"history"`
	}
	if err := json.Unmarshal(got, &read); err != nil {
		t.Fatal(err)
	}
	want := []string{first.ID}
	for name, h := range map[string]int{"SendMessage": len(sent.Task.History), "GetTask": len(read.History)} {
		if h != 1 {
			t.Fatalf("%s: %d messages of history, want 1", name, h)
		}
	}
	if diff := cmp.Diff(want, sent.Task.History[0].ReferenceTaskIDs); diff != "" {
		t.Errorf("SendMessage's history (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, read.History[0].ReferenceTaskIDs); diff != "" {
		t.Errorf("GetTask's history (-want +got):\n%s", diff)
	}
}
