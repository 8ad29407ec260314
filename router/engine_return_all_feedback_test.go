package router_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// reporter is what a caller of a version 3 call uses to report on it, in
// process (the Engine) or over HTTP (a Client).
type reporter interface {
	ValidateV3(context.Context, *router.ValidateV3Request) (*router.ValidateV3Response, error)
	Feedback(ctx context.Context, traceID string, right bool) error
}

// TestFeedback_returnAllWithoutVerdict: a return_all call whose votes hold
// no strict majority (VALID, INVALID, NEEDS_SPEC) answers no verdict, so
// a report on it is refused as one on an unknown call and moves no
// record, in process and over loopback HTTP; a return_all call with a
// majority (VALID, VALID, INVALID) answers it and takes the report.
func TestFeedback_returnAllWithoutVerdict(t *testing.T) {
	V := routertest.Verdict(router.VerdictValid)
	I := routertest.Verdict(router.VerdictInvalid)
	N := routertest.Verdict(router.VerdictNeedsSpec)
	for _, tc := range []struct {
		name    string
		workers []router.Worker
		verdict router.Verdict
	}{
		{"split three ways", []router.Worker{V, I, N}, ""},
		{"a majority", []router.Worker{V, V, I}, router.VerdictValid},
	} {
		for _, over := range []string{"engine", "http"} {
			t.Run(tc.name+"/"+over, func(t *testing.T) {
				store := new(reputation.Memory)
				book, err := reputation.New(store, reputation.Options{})
				if err != nil {
					t.Fatal(err)
				}
				e := newEngine(t, routertest.Sessions(1, 3, tc.workers...), router.WithReputation(book))
				var r reporter = e
				if over == "http" {
					_, r, _ = feedbackServer(t, e)
				}
				const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
				ctx := router.WithTraceID(t.Context(), trace)
				resp, err := r.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll))
				if err != nil {
					t.Fatal(err)
				}
				if resp.Verdict != tc.verdict {
					t.Fatalf("verdict %q, want %q (votes %v)", resp.Verdict, tc.verdict, resp.Consensus.Verdicts)
				}
				keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
				before := reputationtest.Load(t, store, keys...)
				err = r.Feedback(ctx, trace, true)
				moved := cmp.Diff(before, reputationtest.Load(t, store, keys...)) != ""
				if answered := tc.verdict != ""; answered != (err == nil) || answered != moved || !answered && !errors.Is(err, router.ErrUnknownCall) {
					t.Errorf("report: error %v, records moved %v; want it taken (and moving them) only when the call answered a verdict, else ErrUnknownCall", err, moved)
				}
			})
		}
	}
}
