package problem_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/problem"
)

func TestNew(t *testing.T) {
	got := problem.New(http.StatusConflict, problem.CodeDisagreement, "replicas disagree")
	want := &problem.Details{
		Type:   "urn:vouch:problem:disagreement",
		Title:  "Conflict",
		Status: 409,
		Detail: "replicas disagree",
		Code:   "disagreement",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	if got := problem.Newf(413, problem.CodeBodyTooLarge, "body is larger than %d bytes", 64); got.Detail != "body is larger than 64 bytes" || got.Title != "Request Entity Too Large" {
		t.Errorf("Newf = %+v", got)
	}
}

func TestInvalid(t *testing.T) {
	errs := []problem.FieldError{
		{Field: "consensus.replicas", Rule: "oneof", Message: "must be one of 1, 3, 5, got 2"},
		{Field: "claim.output", Rule: "present", Message: "is required and must not be null"},
	}
	p := problem.Invalid(errs)
	if p.Status != 400 || p.Code != problem.CodeInvalidRequest || p.Title != "Bad Request" || p.Type != "urn:vouch:problem:invalid_request" {
		t.Errorf("Invalid: status %d code %q title %q type %q", p.Status, p.Code, p.Title, p.Type)
	}
	if want := "consensus.replicas: must be one of 1, 3, 5, got 2; claim.output: is required and must not be null"; p.Detail != want {
		t.Errorf("Detail = %q, want %q", p.Detail, want)
	}
	if diff := cmp.Diff(errs, p.Errors); diff != "" {
		t.Errorf("Errors (-want +got):\n%s", diff)
	}
}

func TestDetails_Error(t *testing.T) {
	tests := []struct {
		p    *problem.Details
		want string
	}{
		{problem.New(404, problem.CodeNotFound, "no receipt r1"), "404 not_found: no receipt r1"},
		{problem.New(500, problem.CodeInternal, ""), "500 internal"},
		{&problem.Details{Status: 502, Title: "Bad Gateway"}, "502 Bad Gateway"},
		{&problem.Details{Status: 502, Title: "Bad Gateway", Detail: "upstream closed"}, "502 Bad Gateway: upstream closed"},
	}
	for _, tc := range tests {
		if got := tc.p.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	// A wrapped problem is found by errors.As.
	wrapped := fmt.Errorf("router: calling: %w", problem.New(429, problem.CodeRateLimited, "slow down"))
	var p *problem.Details
	if !errors.As(wrapped, &p) || p.Code != problem.CodeRateLimited {
		t.Errorf("errors.As through a wrap = %v", p)
	}
}

func TestWrite(t *testing.T) {
	p := problem.Invalid([]problem.FieldError{{Field: "session_id", Rule: "required", Message: "is required"}})
	p.Instance = "/api/v2/validate"
	p.RequestID = "req-1"
	p.Extra = json.RawMessage(`{"runs":[1,2]}`)

	rec := httptest.NewRecorder()
	problem.Write(rec, p)
	res := rec.Result()
	if res.StatusCode != 400 {
		t.Errorf("status %d, want 400", res.StatusCode)
	}
	if got := res.Header.Get("Content-Type"); got != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", got)
	}
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	body := rec.Body.String()
	if !strings.HasSuffix(body, "}\n") {
		t.Errorf("body %q does not end with a newline after the object", body)
	}
	// The members are the RFC 9457 names plus the extension members.
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &members); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range members {
		names = append(names, k)
	}
	wantNames := []string{"code", "detail", "errors", "extra", "instance", "request_id", "status", "title", "type"}
	if diff := cmp.Diff(wantNames, names, cmpSort); diff != "" {
		t.Errorf("body members (-want +got):\n%s", diff)
	}
	var back problem.Details
	if err := json.Unmarshal([]byte(body), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, &back); diff != "" {
		t.Errorf("decoded body (-written +decoded):\n%s", diff)
	}
}

// TestWrite_badExtra checks that an Extra that is not JSON is dropped and
// the rest of the problem is still sent.
func TestWrite_badExtra(t *testing.T) {
	p := problem.New(409, problem.CodeDisagreement, "replicas disagree")
	p.Extra = json.RawMessage(`{not json`)
	rec := httptest.NewRecorder()
	problem.Write(rec, p)
	if rec.Code != 409 {
		t.Errorf("status %d, want 409", rec.Code)
	}
	var back problem.Details
	if err := json.Unmarshal(rec.Body.Bytes(), &back); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	want := *p
	want.Extra = nil
	if diff := cmp.Diff(&want, &back); diff != "" {
		t.Errorf("decoded body (-want +got):\n%s", diff)
	}
	if string(p.Extra) != `{not json` {
		t.Errorf("Write changed the caller's problem: Extra = %s", p.Extra)
	}
}

// TestWrite_minimal checks that empty optional members are left out.
func TestWrite_minimal(t *testing.T) {
	rec := httptest.NewRecorder()
	problem.Write(rec, problem.New(503, problem.CodeUnavailable, ""))
	want := `{"type":"urn:vouch:problem:unavailable","title":"Service Unavailable","status":503,"code":"unavailable"}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body %s, want %s", got, want)
	}
}

var cmpSort = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// TestInvalid_many checks that a problem with more field errors than
// MaxFieldErrors lists the first MaxFieldErrors and then one error saying
// how many more were found, that its detail repeats no more than a few,
// and that a problem built again from a cut list (as a decoder adds the
// unknown members to a type check's errors) keeps the count.
func TestInvalid_many(t *testing.T) {
	bad := func(n int) []problem.FieldError {
		errs := make([]problem.FieldError, n)
		for i := range errs {
			errs[i] = problem.FieldError{Field: fmt.Sprintf("execution.tools[%d]", i), Rule: "required", Message: "is required"}
		}
		return errs
	}
	const total = 400_000
	p := problem.Invalid(bad(total))
	if got, want := len(p.Errors), problem.MaxFieldErrors+1; got != want {
		t.Fatalf("%d errors listed, want %d", got, want)
	}
	if diff := cmp.Diff(bad(problem.MaxFieldErrors), p.Errors[:problem.MaxFieldErrors]); diff != "" {
		t.Errorf("listed errors (-want +got):\n%s", diff)
	}
	unlisted := total - problem.MaxFieldErrors
	want := problem.FieldError{Field: "(more)", Rule: problem.RuleUnlisted,
		Message: fmt.Sprintf("%d more field errors were found and not listed", unlisted)}
	if diff := cmp.Diff(want, p.Errors[problem.MaxFieldErrors]); diff != "" {
		t.Errorf("last error (-want +got):\n%s", diff)
	}
	if wantDetail := fmt.Sprintf("execution.tools[0]: is required; execution.tools[1]: is required; execution.tools[2]: is required; and %d more field errors", total-3); p.Detail != wantDetail {
		t.Errorf("Detail = %q, want %q", p.Detail, wantDetail)
	}
	if n := len(problem.Encode(p)); n > 10_000 {
		t.Errorf("encoded problem is %d bytes", n)
	}

	// Built again with more errors added, the count grows.
	again := problem.Invalid(append(p.Errors, bad(2)...))
	want.Message = fmt.Sprintf("%d more field errors were found and not listed", unlisted+2)
	if len(again.Errors) != problem.MaxFieldErrors+1 || again.Errors[problem.MaxFieldErrors] != want {
		t.Errorf("built again: %d errors, last %+v; want %d, last %+v", len(again.Errors), again.Errors[len(again.Errors)-1], problem.MaxFieldErrors+1, want)
	}
	if !strings.HasSuffix(again.Detail, fmt.Sprintf("; and %d more field errors", total+2-3)) {
		t.Errorf("built again: Detail = %q", again.Detail)
	}

	// One error over the limit is one error not listed.
	one := problem.Invalid(bad(problem.MaxFieldErrors + 1))
	if got := one.Errors[problem.MaxFieldErrors].Message; got != "1 more field error was found and not listed" {
		t.Errorf("one over: last message %q", got)
	}
}

// TestWrite_noErrorStatus checks that a problem whose status is not an
// error status (0, left unset, or one net/http refuses) is sent as a 500,
// its status member saying the same, where it made Write panic.
func TestWrite_noErrorStatus(t *testing.T) {
	for _, status := range []int{0, 200, 1000} {
		p := &problem.Details{Title: "Broken", Status: status, Code: problem.CodeInternal, Detail: "no status set"}
		rec := httptest.NewRecorder()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Write of status %d panicked: %v", status, r)
				}
			}()
			problem.Write(rec, p)
		}()
		var got problem.Details
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Errorf("status %d: body %q: %v", status, rec.Body, err)
		}
		if rec.Code != http.StatusInternalServerError || got.Status != http.StatusInternalServerError || got.Detail != p.Detail {
			t.Errorf("Write of status %d = %d %+v, want 500 with the problem's detail", status, rec.Code, got)
		}
		if p.Status != status {
			t.Errorf("Write changed the problem's status from %d to %d", status, p.Status)
		}
	}
}

// TestInvalid_hugeCount checks that counts of unlisted errors too large
// to add up (a peer's problem read back, say) still end the list with
// a count, the largest an int holds, where their sum wrapped negative and
// the count was dropped.
func TestInvalid_hugeCount(t *testing.T) {
	huge := problem.FieldError{Field: "(more)", Rule: problem.RuleUnlisted, Message: fmt.Sprintf("%d more field errors were found and not listed", math.MaxInt)}
	p := problem.Invalid([]problem.FieldError{{Field: "a", Rule: "required", Message: "is required"}, huge, huge})
	want := []problem.FieldError{
		{Field: "a", Rule: "required", Message: "is required"},
		{Field: "(more)", Rule: problem.RuleUnlisted, Message: fmt.Sprintf("%d more field errors were found and not listed", math.MaxInt)},
	}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(p.Detail, "a: is required; and ") {
		t.Errorf("Detail = %q, want it to count the errors not listed", p.Detail)
	}
}
