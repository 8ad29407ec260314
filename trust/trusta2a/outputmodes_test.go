package trusta2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestSendMessage_acceptedOutputModes: the configuration's
// acceptedOutputModes pick the parts of the answer's artifact (the data
// part is application/json, the summary text/plain), in 1.0 and 0.3; a
// list that admits neither is ContentTypeNotSupported (−32005), before
// any call is made.
func TestSendMessage_acceptedOutputModes(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const msg = `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Is it true that 17 * 3 = 51?"}]}`
	for _, tt := range []struct {
		modes string
		want  []string // the artifact's parts: "data", "text"; nil: -32005
	}{
		{`[]`, []string{"data", "text"}},
		{`["application/json"]`, []string{"data"}},
		{`["text/plain; charset=utf-8"]`, []string{"text"}},
		{`["text/*","image/png"]`, []string{"text"}},
		{`["*/*"]`, []string{"data", "text"}},
		{`["image/png"]`, nil},
	} {
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":`+msg+`,"configuration":{"acceptedOutputModes":`+tt.modes+`}}`)
		if tt.want == nil {
			if rerr == nil || rerr.Code != -32005 {
				t.Errorf("%s: %s %+v, want -32005", tt.modes, res, rerr)
			}
			continue
		}
		if rerr != nil {
			t.Errorf("%s: %+v, want a task", tt.modes, rerr)
			continue
		}
		var out struct{ Task task1 }
		if err := json.Unmarshal(res, &out); err != nil || len(out.Task.Artifacts) != 1 {
			t.Fatalf("%s: %s, want a task with one artifact", tt.modes, res)
		}
		var got []string
		for _, p := range out.Task.Artifacts[0].Parts {
			if p.Data != nil {
				got = append(got, "data")
			}
			if p.Text != nil {
				got = append(got, "text")
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: the artifact's parts (-want +got):\n%s", tt.modes, diff)
		}
	}

	c := f.client(t, "demo-key", nil)
	send03 := func(modes ...string) (*a2a.Task, error) {
		res, err := c.SendMessage(context.Background(), &a2a.MessageSendParams{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Is it true that 17 * 3 = 51?"}),
			Config:  &a2a.MessageSendConfig{AcceptedOutputModes: modes}})
		if err != nil {
			return nil, err
		}
		task, _ := res.(*a2a.Task)
		return task, nil
	}
	task, err := send03("application/json")
	if err != nil || task == nil || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("0.3, application/json: %+v %v, want a task whose artifact has one part", task, err)
	}
	if _, ok := task.Artifacts[0].Parts[0].(a2a.DataPart); !ok {
		t.Errorf("0.3, application/json: the artifact holds %T, want the data part", task.Artifacts[0].Parts[0])
	}
	if _, err := send03("image/png"); !errors.Is(err, a2a.ErrUnsupportedContentType) {
		t.Errorf("0.3, image/png: %v, want %v", err, a2a.ErrUnsupportedContentType)
	}
}
