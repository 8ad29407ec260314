package trust_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// fieldErrors returns the field errors of err, a 400 from Validate, or
// nil for nil.
func fieldErrors(t *testing.T, err error) []problem.FieldError {
	t.Helper()
	if err == nil {
		return nil
	}
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest {
		t.Fatalf("Validate = %v, want a 400 *trust.Error", err)
	}
	return p.Errors
}

// TestRequest_Validate_taskMembers checks the task members each mode
// needs and those it has no use for: a delegation's input must hold
// something in each of its three forms, a claimed result is refused in a
// delegation, and a dispute context outside an arbitration, each named
// rather than ignored.
func TestRequest_Validate_taskMembers(t *testing.T) {
	array := func(items ...any) router.Input {
		in, err := router.NewArrayInput(items...)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	object := func(raw string) router.Input {
		var in router.Input
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	empty := []problem.FieldError{{Field: "task.input", Rule: "required",
		Message: "must not be empty in delegation mode: a string with text, an object with members, or an array form with items"}}
	claimed := problem.FieldError{Field: "task.claimed_result", Rule: "not_delegation",
		Message: "is the result a validation or an arbitration judges; a delegation produces its own"}
	dispute := func(mode string) problem.FieldError {
		return problem.FieldError{Field: "task.dispute_context", Rule: "arbitration_only",
			Message: "describes the dispute an arbitration settles; a " + mode + " has none"}
	}
	tests := []struct {
		name string
		mode trust.Mode
		edit func(*trust.Task)
		want []problem.FieldError
	}{
		{"text", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = router.NewStringInput("Paris") }, nil},
		{"empty string", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = router.NewStringInput("") }, empty},
		{"white space", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = router.NewStringInput(" \n\t") }, empty},
		{"empty object", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = object(`{}`) }, empty},
		{"object", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = object(`{"q":""}`) }, nil},
		{"array form without items", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = array() }, empty},
		{"array form as JSON without items", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = object(`{"kind":"array","items":[]}`) }, empty},
		{"array form", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = array("a") }, nil},
		{"absent", trust.ModeDelegation, func(tk *trust.Task) { tk.Input = router.Input{} },
			[]problem.FieldError{{Field: "task.input", Rule: "required", Message: "is required in delegation mode"}}},
		{"empty input of a validation", trust.ModeValidation, func(tk *trust.Task) { tk.Input = router.NewStringInput("") }, nil},
		{"claimed result in a delegation", trust.ModeDelegation, func(tk *trust.Task) { tk.ClaimedResult = trust.JSON("Paris") },
			[]problem.FieldError{claimed}},
		{"null claimed result in a delegation", trust.ModeDelegation, func(tk *trust.Task) { tk.ClaimedResult = json.RawMessage("null") }, nil},
		{"dispute context in a delegation", trust.ModeDelegation, func(tk *trust.Task) { tk.DisputeContext = trust.JSON("late") },
			[]problem.FieldError{dispute("delegation")}},
		{"dispute context in a validation", trust.ModeValidation, func(tk *trust.Task) { tk.DisputeContext = trust.JSON("late") },
			[]problem.FieldError{dispute("validation")}},
		{"dispute context in an arbitration", trust.ModeArbitration, func(*trust.Task) {}, nil},
		{"both in a delegation", trust.ModeDelegation, func(tk *trust.Task) {
			tk.ClaimedResult, tk.DisputeContext = trust.JSON(1), trust.JSON(2)
		}, []problem.FieldError{claimed, dispute("delegation")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request(tc.mode, trust.PolicyFast)
			tc.edit(&req.Task)
			if diff := cmp.Diff(tc.want, fieldErrors(t, req.Validate())); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequest_Validate_context: the caller's context reaches the router
// beside the task in a validation or an arbitration, so the three names
// that carry the task there are refused in it (null counting as absent),
// each naming the task member to use; an exact delegation, whose router task has no context,
// refuses any, where a judged one hands it to its judges.
func TestRequest_Validate_context(t *testing.T) {
	reserved := func(name, task string) problem.FieldError {
		return problem.FieldError{Field: "context." + name, Rule: "reserved",
			Message: "is the member in which the service hands the router " + task + "; give it as " + task}
	}
	exact := problem.FieldError{Field: "context", Rule: "not_delegation",
		Message: "reaches no worker in a delegation whose answers agree exactly: leave it out, or give job data as metadata"}
	judged := &trust.DelegationOptions{Agreement: trust.AgreementJudged}
	tests := []struct {
		name    string
		mode    trust.Mode
		context map[string]any
		options *trust.DelegationOptions
		want    []problem.FieldError
	}{
		{"a validation's", trust.ModeValidation, map[string]any{"agent_id": "a-1", "task": "x"}, nil, nil},
		{"the input", trust.ModeValidation, map[string]any{"task_input": "Lyon"}, nil, []problem.FieldError{reserved("task_input", "task.input")}},
		{"all three", trust.ModeArbitration, map[string]any{"task_input": 1, "task_spec": "s", "dispute_context": "late"}, nil,
			[]problem.FieldError{reserved("task_input", "task.input"), reserved("task_spec", "task.spec"), reserved("dispute_context", "task.dispute_context")}},
		{"null, as absent", trust.ModeValidation, map[string]any{"task_spec": nil}, nil, nil},
		{"an exact delegation's", trust.ModeDelegation, map[string]any{"agent_id": "a-1"}, nil, []problem.FieldError{exact}},
		{"an exact delegation's, empty", trust.ModeDelegation, map[string]any{}, nil, nil},
		{"a judged delegation's", trust.ModeDelegation, map[string]any{"agent_id": "a-1"}, judged, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request(tc.mode, trust.PolicyFast)
			req.Context, req.Delegation = tc.context, tc.options
			if diff := cmp.Diff(tc.want, fieldErrors(t, req.Validate())); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequest_Validate_hashableReason: a value a receipt cannot hash is
// refused with the reason RFC 8785 canonicalization gave, a number out of
// range or a lone surrogate, not one reason for all.
func TestRequest_Validate_hashableReason(t *testing.T) {
	for _, tc := range []struct{ claim, reason string }{
		{`"x\ud800"`, "invalid surrogate pair"},
		{`[1e400]`, "number 1e400 is out of the range of an IEEE 754 double"},
	} {
		req := request(trust.ModeValidation, trust.PolicyFast)
		req.Task.ClaimedResult = json.RawMessage(tc.claim)
		req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{OutputHash: true}}
		errs := fieldErrors(t, req.Validate())
		if len(errs) != 1 || errs[0].Field != "task.claimed_result" || errs[0].Rule != "hashable" ||
			!strings.HasPrefix(errs[0].Message, "cannot be hashed for the receipt: ") || !strings.Contains(errs[0].Message, tc.reason) {
			t.Errorf("%s: field errors %+v, want rule hashable on task.claimed_result saying %q", tc.claim, errs, tc.reason)
		}
	}
}

// TestService_Call_blankCounterparty calls the service in process with a
// receipt block that names a counterparty of white space only: the call
// is a 400 naming the item, before any work and before any receipt.
func TestService_Call_blankCounterparty(t *testing.T) {
	workers := routertest.NewRecorder(honest(0.9))
	store := &countingStore{Store: &receipt.MemStore{}}
	svc, err := trust.New(newEngine(t, workers, workers, workers), trust.WithReceipts(&receipt.Issuer{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyFast)
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, Visibility: receipt.VisibilityShared, Counterparties: []string{"acme", "\t"}}
	_, err = svc.Call(t.Context(), req)
	want := []problem.FieldError{{Field: "receipt.counterparties[1]", Rule: "text", Message: "must hold text, not white space only"}}
	if diff := cmp.Diff(want, fieldErrors(t, err)); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}
	if n := workers.Calls.Load(); n != 0 {
		t.Errorf("the refused call ran %d jobs", n)
	}
	if n := store.puts.Load(); n != 0 {
		t.Errorf("the refused call stored %d receipts", n)
	}
}

// TestHandler_refusedNotDropped sends envelopes whose members the call
// used to ignore: each is a 400 naming the member and the rule, before
// any work.
func TestHandler_refusedNotDropped(t *testing.T) {
	s := newBadInputServer(t, time.Now)
	validation := func(extra string) string {
		return `{"mode":"validation","policy":"fast","task":{"input":"Paris","claimed_result":"Paris is French."` + extra
	}
	tests := []struct {
		name, body, field, rule string
	}{
		{"empty string input", `{"mode":"delegation","policy":"fast","task":{"input":""}}`, "task.input", "required"},
		{"empty object input", `{"mode":"delegation","policy":"fast","task":{"input":{}}}`, "task.input", "required"},
		{"empty array form", `{"mode":"delegation","policy":"fast","task":{"input":{"kind":"array","items":[]}}}`, "task.input", "required"},
		{"claimed result in a delegation", `{"mode":"delegation","policy":"fast","task":{"input":"Paris","claimed_result":"x"}}`,
			"task.claimed_result", "not_delegation"},
		{"dispute context in a validation", validation(`,"dispute_context":"late"}}`), "task.dispute_context", "arbitration_only"},
		{"receipt terms without mode", validation(`},"receipt":{"visibility":"shared","counterparties":["acme"]}}`), "receipt.mode", "required"},
		{"include without mode", validation(`},"receipt":{"include":{"output_hash":true}}}`), "receipt.mode", "required"},
		{"terms with mode none", validation(`},"receipt":{"mode":"none","ttl":"7d"}}`), "receipt.mode", "required"},
		{"counterparties of a private receipt", validation(`},"receipt":{"mode":"inline","visibility":"private","counterparties":["acme"]}}`),
			"receipt.counterparties", "shared_only"},
		{"counterparties, private by default", validation(`},"receipt":{"mode":"inline","counterparties":["acme"]}}`),
			"receipt.counterparties", "shared_only"},
		{"a counterparty twice", validation(`},"receipt":{"mode":"inline","visibility":"shared","counterparties":["acme","acme"]}}`),
			"receipt.counterparties", "unique"},
		{"a blank counterparty", validation(`},"receipt":{"mode":"inline","visibility":"shared","counterparties":["acme"," "]}}`),
			"receipt.counterparties[1]", "text"},
		{"the task's input in the context", validation(`},"context":{"task_input":"Lyon"}}`), "context.task_input", "reserved"},
		{"a dispute context in a validation's context", validation(`},"context":{"dispute_context":"late"}}`), "context.dispute_context", "reserved"},
		{"context in an exact delegation", `{"mode":"delegation","policy":"fast","task":{"input":"Paris"},"context":{"agent_id":"a-1"}}`,
			"context", "not_delegation"},
		{"lone surrogate", `{"mode":"validation","policy":"fast","task":{"claimed_result":"x\ud800"},"receipt":{"mode":"inline","include":{"output_hash":true}}}`,
			"task.claimed_result", "unicode"},
		{"lone surrogate without a receipt", `{"mode":"validation","policy":"fast","task":{"type":"t\udbff","claimed_result":"x"}}`,
			"task.type", "unicode"},
	}
	for _, tc := range tests {
		status, ct, raw := s.do(t, http.MethodPost, trust.CallPath, "k", tc.body)
		checkProblem(t, tc.name, status, ct, raw, http.StatusBadRequest, "invalid_request", tc.field)
		if !strings.Contains(string(raw), `"rule":"`+tc.rule+`"`) {
			t.Errorf("%s: %s, want rule %s", tc.name, raw, tc.rule)
		}
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Errorf("refused envelopes ran %d jobs", n)
	}
	if n := s.store.puts.Load(); n != 0 {
		t.Errorf("refused envelopes stored %d receipts", n)
	}
}
