package router_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// stubborn returns a worker that ignores its context and answers VALID
// once release is closed.
func stubborn(release <-chan struct{}) *routertest.Recorder {
	return routertest.NewRecorder(router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		<-release
		return &router.Result{Verdict: router.VerdictValid}, nil
	}))
}

// TestEngine_ValidateV3_abandonsWorkerIgnoringContext checks the
// documented limit in version 3: a replica whose worker ignores its
// cancelled context is abandoned after the stop grace, recorded with the
// label of the replicas cut short, and a warning is logged; its goroutine
// ends only when the worker returns.
func TestEngine_ValidateV3_abandonsWorkerIgnoringContext(t *testing.T) {
	for _, tt := range []struct {
		name      string
		policy    router.DisagreementPolicy
		timeoutMS int64
		want      []router.Label
		reason    string
	}{
		{"decided", router.DisagreeBestEffort, 0, []router.Label{lV, lV, lC}, "outcome already decided"},
		{"timeout", router.DisagreeReturnAll, 20, []router.Label{lV, lV, lT}, "no answer within 20ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			release := make(chan struct{})
			s := stubborn(release)
			var buf bytes.Buffer
			V := routertest.Verdict(valid)
			e := newEngine(t, routertest.Sessions(1, 3, V, V, s),
				router.WithStopGrace(5*time.Millisecond), router.WithEngineLogger(slog.New(slog.NewTextHandler(&buf, nil))))
			req := validateV3(3, tt.policy)
			req.Policy.TimeoutMS = tt.timeoutMS
			got, err := e.ValidateV3(context.Background(), req)
			if err != nil {
				t.Fatalf("ValidateV3: %v", err)
			}
			if n := s.Returned.Load(); n != 0 {
				t.Errorf("the stubborn worker returned %d times before release, want 0", n)
			}
			if diff := cmp.Diff(tt.want, labelsOf(got.Evidence.Runs)); diff != "" {
				t.Errorf("run labels (-want +got):\n%s", diff)
			}
			if r := got.Evidence.Runs[2]; r.SessionID != 3 || r.TaskID == "" || !strings.Contains(r.Error, tt.reason) {
				t.Errorf("abandoned run = %+v, want session 3, a task id and an error containing %q", r, tt.reason)
			}
			if !strings.Contains(buf.String(), "abandoning") {
				t.Errorf("log = %q, want a warning about the abandoned worker", buf.String())
			}
			close(release)
			for s.Returned.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// TestEngine_ValidateV3_abandonedTimeoutsCool checks that a session whose
// worker hangs past its deadline, ignoring its context, still counts the
// TIMEOUT as a failure and cools down, although the engine never saw the
// worker return. The deadline is the engine's own (a timeout_ms the
// caller chose would say nothing of the session).
func TestEngine_ValidateV3_abandonedTimeoutsCool(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	V := routertest.Verdict(valid)
	e := newEngine(t, routertest.Sessions(1, 3, V, V, stubborn(release)),
		router.WithStopGrace(time.Millisecond), router.WithHealth(1, time.Hour), router.WithReplicaTimeout(10*time.Millisecond))
	req := validateV3(3, router.DisagreeReturnAll)
	if _, err := e.ValidateV3(context.Background(), req); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := e.ValidateV3(context.Background(), req)
	asError(t, err, http.StatusServiceUnavailable, "insufficient_sessions")
}
