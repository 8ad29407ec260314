package trust_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust"
)

// TestHandler_unknownMember sends the trust call and verify_receipt bodies
// with a misspelt member, or a member given "" where leaving it out means
// the default, over loopback: each answers 400 naming the member by its
// JSON path, before any work, and no receipt is stored for a call whose
// misspelt receipt block would have left it without one.
func TestHandler_unknownMember(t *testing.T) {
	s := newBadInputServer(t, time.Now)
	task := `"task":{"type":"summary","input":"Paris","claimed_result":"Paris is French."}`
	for _, c := range []struct{ name, path, body, field string }{
		{"misspelt receipt", trust.CallPath, `{"reciept":{"mode":"inline"},"mode":"validation","policy":"safe",` + task + `}`, "reciept"},
		{"misspelt receipt member", trust.CallPath, `{"receipt":{"mode":"inline","visiblity":"shared"},"mode":"validation","policy":"safe",` + task + `}`, "receipt.visiblity"},
		{"misspelt task member", trust.CallPath, `{"task":{"input":"Paris","claimed_result":"x","dispute_contxt":{}},"mode":"validation","policy":"safe"}`, "task.dispute_contxt"},
		{"misspelt verify member", "/api/v4/verify_receipt", `{"receipt":{"receipt_id":"r"},"ouput":"x"}`, "ouput"},
		{"empty agreement", trust.CallPath, `{"mode":"delegation","policy":"fast","task":{"input":"Paris"},"delegation":{"agreement":""}}`, "delegation.agreement"},
		{"wrong type beside a misspelt member", trust.CallPath, `{"mode":5,"policy":"safe","polcy":"fast",` + task + `}`, "mode"},
	} {
		status, ct, raw := s.do(t, http.MethodPost, c.path, "k", c.body)
		checkProblem(t, c.name, status, ct, raw, http.StatusBadRequest, "invalid_request", c.field)
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Errorf("bodies with unknown members ran %d jobs", n)
	}
	if n := s.store.puts.Load(); n != 0 {
		t.Errorf("bodies with unknown members stored %d receipts", n)
	}
}
