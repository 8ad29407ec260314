package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_feedbackOnce: feedback on a call comes from its caller
// only, and counts once however often and through whichever door it is
// reported (by trace id or receipt id, through the service or its engine):
// a second report replaces the first. Another caller's report on the
// call's trace id is refused and moves nothing (taken, it would
// move every session's reliability from 0.83 to 0.50).
func TestService_feedbackOnce(t *testing.T) {
	priv, store, book := feedbackBook(t)
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSigningKey(priv), trust.WithoutExams()) // the call's own report
	if err != nil {
		t.Fatal(err)
	}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	alice := trust.WithCaller(context.Background(), "key:alice")
	bob := trust.WithCaller(context.Background(), "key:bob")
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Inline()
	resp, err := s.Call(router.WithTraceID(alice, trace), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TraceID != trace {
		t.Fatalf("trace id %q, want %q", resp.TraceID, trace)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	sessions := r.CortensorRefs.Sessions
	keys := make([]reputation.Key, len(sessions))
	for i, id := range sessions {
		keys[i] = reputation.Key{Session: id}
	}
	load := func() []reputation.Record { return reputationtest.Load(t, store, keys...) }
	exact := cmpopts.EquateApprox(0, 1e-12)
	before := load()

	for name, report := range map[string]func() error{
		"trust id":    func() error { return s.Feedback(bob, trace, false) },
		"receipt id":  func() error { return s.Feedback(bob, r.ReceiptID, false) },
		"engine":      func() error { return e.Feedback(router.WithCaller(context.Background(), "key:bob"), trace, false) },
		"local trace": func() error { return e.Feedback(context.Background(), trace, false) },
	} {
		if err := report(); !errors.Is(err, trust.ErrUnknownCall) && !errors.Is(err, router.ErrUnknownCall) {
			t.Errorf("another caller's report by %s: %v, want ErrUnknownCall", name, err)
		}
	}
	if diff := cmp.Diff(before, load(), exact); diff != "" {
		t.Fatalf("another caller's reports moved the records (-before +after):\n%s", diff)
	}

	if err := s.Feedback(alice, trace, false); err != nil {
		t.Fatal(err)
	}
	wrong := load()
	for i, id := range sessions {
		backed := slices.Contains(r.ConsensusSnapshot.Agreeing, i)
		if backed && !(wrong[i].Wrong > before[i].Wrong) {
			t.Errorf("session %d backed the outcome reported wrong: record %+v, before %+v", id, wrong[i], before[i])
		}
	}
	for name, report := range map[string]func() error{
		"trace id again": func() error { return s.Feedback(alice, trace, false) },
		"receipt id":     func() error { return s.Feedback(alice, r.ReceiptID, false) },
		"engine":         func() error { return e.Feedback(alice, trace, false) },
	} {
		if err := report(); err != nil {
			t.Fatalf("the same report by %s: %v", name, err)
		}
		if diff := cmp.Diff(wrong, load(), exact); diff != "" {
			t.Errorf("the same report again by %s counted twice (-once +twice):\n%s", name, diff)
		}
	}

	// Reported right instead: the records read as if only that had been
	// reported.
	if err := e.Feedback(alice, trace, true); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(before)
	for i := range sessions {
		if slices.Contains(r.ConsensusSnapshot.Agreeing, i) {
			want[i].Right += reputation.DefaultFeedbackWeight
		} else {
			want[i].Wrong += reputation.DefaultFeedbackWeight
		}
	}
	if diff := cmp.Diff(want, load(), exact); diff != "" {
		t.Errorf("a replaced report (-only the second +after both):\n%s", diff)
	}
}

// TestHandler_trialCallsDoNotTeach: calls through the trial route, with a
// credential or without, teach the book nothing and cannot be reported
// on; the same calls through the key route teach.
func TestHandler_trialCallsDoNotTeach(t *testing.T) {
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{LearnFromAgreement: true})
	if err != nil {
		t.Fatal(err)
	}
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, s, trust.WithTrialLimit(router.TrialLimit{Rate: rate.Inf}))
	keys := make([]reputation.Key, 5)
	for i := range keys {
		keys[i] = reputation.Key{Session: int64(i + 1)}
	}
	evidence := func() float64 {
		t.Helper()
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, r := range recs {
			sum += r.Right + r.Wrong
		}
		return sum
	}
	call := func(path, key string) *trust.Response {
		t.Helper()
		body, err := json.Marshal(validationRequest())
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, res.StatusCode)
		}
		resp := new(trust.Response)
		if err := json.NewDecoder(res.Body).Decode(resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, key := range []string{"", testKey} {
		resp := call(trust.TrialCallPath, key)
		if got := evidence(); got != 0 {
			t.Errorf("a trial call (key %q) taught the book %v votes", key, got)
		}
		alice := trust.WithCaller(context.Background(), "alice")
		if err := s.Feedback(alice, resp.TraceID, false); !errors.Is(err, trust.ErrUnknownCall) {
			t.Errorf("a report on a trial call (key %q): %v, want ErrUnknownCall", key, err)
		}
	}
	call(trust.CallPath, testKey)
	if got := evidence(); !(got > 0) {
		t.Errorf("a call through the key route taught the book %v votes", got)
	}
}

// TestService_feedbackReceiptOfReusedTrace: a caller that reuses a trace
// id for a later call, then reports on the earlier call's receipt, moves
// the records of the earlier call's sessions, not the later call's.
func TestService_feedbackReceiptOfReusedTrace(t *testing.T) {
	priv, store, book := feedbackBook(t)
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 6, w, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	first, err := trust.New(e, trust.WithSigningKey(priv), trust.WithSessionPool(1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	later, err := trust.New(e, trust.WithSigningKey(priv), trust.WithSessionPool(4, 5, 6))
	if err != nil {
		t.Fatal(err)
	}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	alice := router.WithTraceID(trust.WithCaller(context.Background(), "key:alice"), trace)
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Inline()
	resp, err := first.Call(alice, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := later.Call(alice, req); err != nil {
		t.Fatal(err)
	}
	keys := make([]reputation.Key, 6)
	for i := range keys {
		keys[i] = reputation.Key{Session: int64(i + 1)}
	}
	load := func() []reputation.Record { return reputationtest.Load(t, store, keys...) }
	before := load()
	if err := first.Feedback(alice, r.ReceiptID, false); err != nil {
		t.Fatal(err)
	}
	after := load()
	for i := range keys {
		moved := after[i] != before[i]
		if earlier := i < 3; moved != earlier {
			t.Errorf("session %d: moved %v, want %v (the report is on the call of sessions 1 to 3)", i+1, moved, earlier)
		}
	}
}

// feedbackBook returns a signing key and a reputation book on a store in
// memory.
func feedbackBook(t *testing.T) (ed25519.PrivateKey, *reputation.Memory, *reputation.Book) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return priv, store, book
}

// TestService_feedbackOnceForgotten: a call reported by its trace id and
// then by its receipt where the call is not remembered (another server
// on the same book and receipts, as after the ledger forgot it) counts
// once: the report is kept in the book's store, under the week of the
// call, which the call remembered and its receipt name alike even when
// the call is decided in the last millisecond of a week.
func TestService_feedbackOnceForgotten(t *testing.T) {
	const week = 7 * 24 * time.Hour // of the Unix epoch, as the book counts weeks
	lastOfWeek := time.Now().Truncate(week).Add(-time.Millisecond)
	for name, now := range map[string]func() time.Time{
		"now":             nil,
		"end of the week": func() time.Time { return lastOfWeek },
	} {
		t.Run(name, func(t *testing.T) { feedbackOnceForgotten(t, now) })
	}
}

func feedbackOnceForgotten(t *testing.T, now func() time.Time) {
	priv, store, book := feedbackBook(t)
	signer, err := receipt.NewEd25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	receipts := &receipt.MemStore{}
	w := honest(0.9)
	var svcs []*trust.Service
	for range 2 {
		e, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w), router.WithReputation(book))
		if err != nil {
			t.Fatal(err)
		}
		s, err := trust.New(e, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: receipts, Now: now}))
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, s)
	}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	alice := trust.WithCaller(context.Background(), "key:alice")
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Inline()
	resp, err := svcs[0].Call(router.WithTraceID(alice, trace), req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	if err := svcs[0].Feedback(alice, trace, false); err != nil {
		t.Fatal(err)
	}
	once := reputationtest.Load(t, store, keys...)
	if err := svcs[1].Feedback(alice, r.ReceiptID, false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, reputationtest.Load(t, store, keys...)); diff != "" {
		t.Errorf("the report by receipt where the call is forgotten counted again (-once +twice):\n%s", diff)
	}
}
