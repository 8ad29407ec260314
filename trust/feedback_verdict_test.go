package trust_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_FeedbackVerdict: the true verdict of a validation that
// answered RETRY teaches its votes (Feedback has no answer to call right
// or wrong): the session that voted the verdict gains a right outcome,
// the others a wrong one. A repeat adds nothing, the opposite verdict
// replaces it, and a verdict on another caller's call, on a delegation
// or of another word is refused and moves nothing.
func TestService_FeedbackVerdict(t *testing.T) {
	s, store := dissentService(t, trust.WithoutExams()) // TestService_exam has exams
	alice := trust.WithCaller(context.Background(), "key:alice")
	bob := trust.WithCaller(context.Background(), "key:bob")
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp, err := s.Call(router.WithTraceID(alice, trace), request(trust.ModeValidation, trust.PolicyOracle))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusRetry {
		t.Fatalf("status %s, want RETRY (oracle refuses one dissent)", resp.Status)
	}
	var sessions []router.SessionID
	for _, st := range resp.Evidence.Steps {
		sessions = append(sessions, st.Sessions...)
	}
	if len(sessions) != len(resp.Evidence.Verdicts) {
		t.Fatalf("%d sessions for %d verdicts", len(sessions), len(resp.Evidence.Verdicts))
	}
	keys := make([]reputation.Key, len(sessions))
	for i, id := range sessions {
		keys[i] = reputation.Key{Session: int64(id)}
	}
	load := func() []reputation.Record { return reputationtest.Load(t, store, keys...) }
	exact := cmpopts.EquateApprox(0, 1e-12)
	before := load()
	// taught returns the records a report of verdict v leaves.
	taught := func(v router.Verdict) []reputation.Record {
		want := append([]reputation.Record(nil), before...)
		for i, got := range resp.Evidence.Verdicts {
			if got == router.Label(v) {
				want[i].Right += reputation.DefaultFeedbackWeight
			} else {
				want[i].Wrong += reputation.DefaultFeedbackWeight
			}
		}
		return want
	}

	other := trust.WithCaller(context.Background(), "key:alice")
	deleg, err := s.Call(router.WithTraceID(other, "5cf92f3577b34da6a3ce929d0e0e4737"), request(trust.ModeDelegation, trust.PolicySafe))
	if err != nil {
		t.Fatal(err)
	}
	for name, report := range map[string]func() error{
		"bob":          func() error { return s.FeedbackVerdict(bob, trace, router.VerdictInvalid) },
		"a delegation": func() error { return s.FeedbackVerdict(alice, deleg.TraceID, router.VerdictInvalid) },
		"no call":      func() error { return s.FeedbackVerdict(alice, "0af7651916cd43dd8448eb211c80319c", router.VerdictValid) },
	} {
		if err := report(); !errors.Is(err, trust.ErrUnknownCall) {
			t.Errorf("%s: %v, want ErrUnknownCall", name, err)
		}
	}
	if err := s.FeedbackVerdict(alice, trace, "RETRY"); err == nil || errors.Is(err, trust.ErrUnknownCall) {
		t.Errorf("the verdict RETRY: %v, want an error of its own", err)
	}
	if diff := cmp.Diff(before, load(), exact); diff != "" {
		t.Fatalf("refused reports moved the records (-before +after):\n%s", diff)
	}

	for _, step := range []struct {
		name    string
		verdict router.Verdict
	}{
		{"the liar's verdict", router.VerdictInvalid},
		{"the same again", router.VerdictInvalid},
		{"the opposite", router.VerdictValid},
	} {
		if err := s.FeedbackVerdict(alice, trace, step.verdict); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(taught(step.verdict), load(), exact); diff != "" {
			t.Errorf("%s: records (-want +got):\n%s", step.name, diff)
		}
	}
	// The verdict the tally leaned to, reported as its answer being
	// right, is the same report.
	if err := s.Feedback(alice, trace, true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(taught(router.VerdictValid), load(), exact); diff != "" {
		t.Errorf("Feedback after the same verdict counted again (-want +got):\n%s", diff)
	}
}

// TestService_FeedbackVerdict_reputationOff: a service that weighs no
// votes by reputation refuses a verdict as it refuses an outcome.
func TestService_FeedbackVerdict_reputationOff(t *testing.T) {
	s, err := trust.New(newEngine(t, honest(0.9), honest(0.9), honest(0.9)), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FeedbackVerdict(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", router.VerdictValid); !errors.Is(err, trust.ErrReputationOff) {
		t.Errorf("%v, want ErrReputationOff", err)
	}
}

// dissentService returns a service over five sessions whose fifth
// always contradicts the other four, learning on a book over store.
func dissentService(t *testing.T, opts ...trust.Option) (*trust.Service, *reputation.Memory) {
	t.Helper()
	w := honest(0.9)
	return bookServiceWith(t, opts, w, w, w, w, routertest.Lie(w))
}

// bookService returns a service over sessions of workers, learning on a
// book over store.
func bookService(t *testing.T, workers ...router.Worker) (*trust.Service, *reputation.Memory) {
	t.Helper()
	return bookServiceWith(t, nil, workers...)
}

// bookServiceWith is bookService, the service built with opts.
func bookServiceWith(t *testing.T, opts []trust.Option, workers ...router.Worker) (*trust.Service, *reputation.Memory) {
	t.Helper()
	_, store, book := feedbackBook(t)
	e, err := router.NewEngine(routertest.Sessions(1, 2, workers...), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, store
}
