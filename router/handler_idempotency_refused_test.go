package router_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHandler_idempotencyRefusedNotKept: a request the Service refuses
// with 400 before anything runs (a session_pool naming a session the
// router does not have) is not kept under its Idempotency-Key, as a body
// the Handler refuses is not: the corrected request sent with the same
// key runs, where it was answered 422 as another request under a used
// key. The corrected request's own answer is kept and replayed.
func TestHandler_idempotencyRefusedNotKept(t *testing.T) {
	srv, rec := newKeyedHandler(t)
	path := srv.URL + "/api/v3/validate"
	const (
		wrong = `{"claim":{"type":"summary","output":"x"},"consensus":{"replicas":3,"session_pool":[1,2,9]}}`
		right = `{"claim":{"type":"summary","output":"x"},"consensus":{"replicas":3,"session_pool":[1,2,3]}}`
	)
	var got []int
	for _, body := range []string{wrong, right, right} {
		r := send(t, "POST", path, body, "Authorization", "Bearer k", "Idempotency-Key", "corrected-1")
		got = append(got, r.status)
		if r.status == 200 && len(got) == 3 && r.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the repeat of the corrected request was not replayed")
		}
	}
	if diff := cmp.Diff([]int{400, 200, 200}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if n := len(rec.Jobs()); n != 3 {
		t.Errorf("workers ran %d jobs, want the corrected call's 3", n)
	}
}
