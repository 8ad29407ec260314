package trusta2a_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestSendMessage_v1NumbersAsSent sends, in a data part and in a text
// part holding the arguments' JSON, a claimed result with an integer that
// no float64 holds: the call judges, and the answer's result repeats, the
// number the client sent, as POST /api/v4/trust does, not the nearest
// float64.
func TestSendMessage_v1NumbersAsSent(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	claimed := `{"n":12345678901234567891,"s":"17 * 3 = 51"}`
	args := `{"claimed_result":` + claimed + `,"policy":"fast"}`
	for name, parts := range map[string]string{
		"data part": `[{"data":` + args + `,"mediaType":"application/json"}]`,
		"text part": `[{"text":` + strconv.Quote(args) + `}]`,
	} {
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":`+parts+`}}`)
		if rerr != nil {
			t.Fatalf("%s: %+v", name, rerr)
		}
		got := resultsOf(t, name, res)
		if diff := cmp.Diff([]string{claimed}, got); diff != "" {
			t.Errorf("%s: result (-sent +answered):\n%s", name, diff)
		}
	}
}

// TestSendMessage_v1NumbersBeyondFloat64 sends numbers that no float64
// holds at all: a claimed result of 1e400, in a data part and in a text
// part holding the arguments' JSON, is judged and answered as sent, as
// POST /api/v4/trust judges it, not refused as if the part were no JSON
// object; a tolerance of 1e400 is refused naming tolerance.absolute.
func TestSendMessage_v1NumbersBeyondFloat64(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	args := `{"claimed_result":[1e400,-1e400],"policy":"fast"}`
	for name, parts := range map[string]string{
		"data part": `[{"data":` + args + `,"mediaType":"application/json"}]`,
		"text part": `[{"text":` + strconv.Quote(args) + `}]`,
	} {
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":`+parts+`}}`)
		if rerr != nil {
			t.Errorf("%s: %+v", name, rerr)
			continue
		}
		got := resultsOf(t, name, res)
		if diff := cmp.Diff([]string{`[1e400,-1e400]`}, got); diff != "" {
			t.Errorf("%s: result (-sent +answered):\n%s", name, diff)
		}
	}

	_, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"data":`+
		`{"objective":"o","policy":"fast","answer":"number","tolerance":{"absolute":1e400}},"mediaType":"application/json"}]}}`)
	want := "Invalid parameters: message.parts[0].data.tolerance.absolute: number 1e400 is out of range: must be a finite number"
	if rerr == nil || rerr.Message != want {
		t.Errorf("tolerance of 1e400: error %+v, want the message %q", rerr, want)
	}
}

// resultsOf returns the result member of each data part of the one
// artifact of the SendMessage answer res, as written; a task without one
// artifact fails the test.
func resultsOf(t *testing.T, name string, res json.RawMessage) []string {
	t.Helper()
	var out struct {
		Task json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatalf("%s: answered %s, want a task", name, res)
	}
	return taskResults(t, name, out.Task)
}

// taskResults returns the result member of each data part of the one
// artifact of task, as written; a task without one artifact fails the
// test.
func taskResults(t *testing.T, name string, task json.RawMessage) []string {
	t.Helper()
	var out struct {
		Artifacts []struct {
			Parts []struct {
				Data *struct {
					Result json.RawMessage `json:"result"`
				} `json:"data"`
			} `json:"parts"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal(task, &out); err != nil || len(out.Artifacts) != 1 {
		t.Fatalf("%s: answered %s, want a task with one artifact", name, task)
	}
	var got []string
	for _, p := range out.Artifacts[0].Parts {
		if p.Data != nil {
			got = append(got, string(p.Data.Result))
		}
	}
	return got
}

// TestSendMessage_v03NumbersAsSent is TestSendMessage_v1NumbersAsSent
// for A2A 0.3's message/send, whose message the SDK decodes: a data
// part's numbers are judged and answered as the client sent them, not
// as the nearest float64 the SDK holds.
func TestSendMessage_v03NumbersAsSent(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	claimed := `{"n":12345678901234567891,"s":"17 * 3 = 51"}`
	args := `{"claimed_result":` + claimed + `,"policy":"fast"}`
	res, rerr := f.call1(t, "demo-key", "0.3", "message/send",
		`{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":`+args+`}]}}`)
	if rerr != nil {
		t.Fatalf("%+v", rerr)
	}
	got := taskResults(t, "message/send", res)
	if diff := cmp.Diff([]string{claimed}, got); diff != "" {
		t.Errorf("result (-sent +answered):\n%s", diff)
	}
}
