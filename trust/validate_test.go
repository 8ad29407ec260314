package trust_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_Call_claimedResultNotJSON checks that a claimed result, spec
// or dispute context that is not JSON is a 400 naming the member, with or
// without a receipt, before any replica runs.
func TestService_Call_claimedResultNotJSON(t *testing.T) {
	w := honest(0.95)
	s, err := trust.New(newEngine(t, w, w, w), trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}))
	if err != nil {
		t.Fatal(err)
	}
	rule := func(field string) []problem.FieldError {
		return []problem.FieldError{{Field: field, Rule: "rawjson", Message: "must be one JSON value; encode a plain Go value with trust.JSON"}}
	}
	tests := []struct {
		name    string
		edit    func(*trust.Request)
		receipt bool
		want    []problem.FieldError
	}{
		{"claimed result", func(r *trust.Request) { r.Task.ClaimedResult = json.RawMessage("Paris") }, false, rule("task.claimed_result")},
		{"claimed result with a receipt", func(r *trust.Request) { r.Task.ClaimedResult = json.RawMessage("Paris") }, true, rule("task.claimed_result")},
		{"two values", func(r *trust.Request) { r.Task.ClaimedResult = json.RawMessage(`"a" "b"`) }, false, rule("task.claimed_result")},
		{"spec", func(r *trust.Request) { r.Task.Spec = json.RawMessage("{one word") }, false, rule("task.spec")},
		{"dispute context", func(r *trust.Request) {
			r.Mode = trust.ModeArbitration
			r.Task.DisputeContext = json.RawMessage("late")
		}, false, rule("task.dispute_context")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request(trust.ModeValidation, trust.PolicySafe)
			tc.edit(req)
			if tc.receipt {
				req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{OutputHash: true}}
			}
			resp, err := s.Call(context.Background(), req)
			var p *trust.Error
			if !errors.As(err, &p) || p.Status != http.StatusBadRequest {
				t.Fatalf("Call = %+v, %v; want a 400 *trust.Error", resp, err)
			}
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJSON checks that trust.JSON makes a claimed result the service
// accepts from a plain value, and panics on a value that cannot be
// encoded.
func TestJSON(t *testing.T) {
	w := honest(0.95)
	s, err := trust.New(newEngine(t, w, w, w))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(context.Background(), &trust.Request{
		Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Input: router.NewStringInput("Where is Paris?"), ClaimedResult: trust.JSON("in France"), Spec: trust.JSON(map[string]any{"max_words": 3})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusValid || string(resp.Result) != `"in France"` {
		t.Errorf("status %s, result %s; want VALID and the claimed string", resp.Status, resp.Result)
	}
	if _, err := json.Marshal(resp); err != nil {
		t.Errorf("encoding the response: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("JSON(NaN) did not panic")
		}
	}()
	trust.JSON(math.NaN())
}
