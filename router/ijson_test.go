package router_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// A delegation output that is not I-JSON (RFC 7493) is the run's ERROR,
// saying why, not a vote: JavaScript reads 1e400 as Infinity, and a
// receipt cannot hash it. Numbers of a double's range and whole
// characters pass.
func TestEngine_outputNotIJSONIsAnError(t *testing.T) {
	for _, tc := range []struct {
		output string
		why    string // "" for an output that passes
	}{
		{`1e400`, "beyond the range"},
		{`{"a":[-1e400]}`, "beyond the range"},
		{`"\ud800"`, "surrogate"},
		{`{"a":"\udfff"}`, "surrogate"},
		{`{"a":1,"a":2}`, "duplicate"},
		{`1.7976931348623157e308`, ""},
		{`1e-400`, ""},
		{`"\ud83d\ude00"`, ""},
	} {
		w := router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
			return &router.Result{Output: json.RawMessage(tc.output), Confidence: 0.9}, nil
		})
		e, err := router.NewEngine([]router.Session{{ID: 1, Worker: w}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := e.DelegateV2(context.Background(), &router.DelegateV2Request{SessionID: 1, DelegateTask: router.DelegateTask{Objective: "echo"}})
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("output %s: %v, want it answered", tc.output, err)
		case tc.why != "" && err == nil:
			t.Errorf("output %s answered %s, want an ERROR run", tc.output, resp.Result)
		case tc.why != "" && !strings.Contains(err.Error(), tc.why):
			t.Errorf("output %s: %v, want the run's error to say %q", tc.output, err, tc.why)
		}
	}
}
