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
		var out struct {
			Task struct {
				Artifacts []struct {
					Parts []struct {
						Data *struct {
							Result json.RawMessage `json:"result"`
						} `json:"data"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		}
		if err := json.Unmarshal(res, &out); err != nil || len(out.Task.Artifacts) != 1 {
			t.Fatalf("%s: answered %s, want a task with one artifact", name, res)
		}
		var got []string
		for _, p := range out.Task.Artifacts[0].Parts {
			if p.Data != nil {
				got = append(got, string(p.Data.Result))
			}
		}
		if diff := cmp.Diff([]string{claimed}, got); diff != "" {
			t.Errorf("%s: result (-sent +answered):\n%s", name, diff)
		}
	}
}
