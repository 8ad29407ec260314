package chatworker_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router/chatworker"
)

func TestWorker_Work_remembersRejectedSchema(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	f.rejectSchema = true
	w := newWorker(t, f, nil)
	for range 2 {
		if _, err := w.Work(t.Context(), validateJob()); err != nil {
			t.Fatalf("Work: %v", err)
		}
	}
	got := f.schemas()
	// The first job learns that the endpoint rejects response_format; the
	// second does not ask again.
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("requests with response_format (-want +got):\n%s", diff)
	}
}

func TestWorker_Work_keepsSchemaAfterUnrelated400(t *testing.T) {
	f := newFake(t, status(400, ""), status(400, ""), content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	w := newWorker(t, f, nil)
	if _, err := w.Work(t.Context(), validateJob()); err == nil {
		t.Fatal("Work succeeded on a 400, want an error")
	}
	if _, err := w.Work(t.Context(), validateJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	got := f.schemas()
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("requests with response_format (-want +got):\n%s", diff)
	}
}

func TestWorker_Work_noFallbackOnceSchemaWorked(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`), status(400, ""))
	w := newWorker(t, f, nil)
	if _, err := w.Work(t.Context(), validateJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	var se *chatworker.StatusError
	if _, err := w.Work(t.Context(), validateJob()); !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("Work error = %v, want a 400 *StatusError", err)
	}
	// The endpoint took response_format once, so a later 400 is about
	// something else and is not asked again without it.
	if n := len(f.reqs()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}
