package x402test_test

// Mutation tests of the conformance suites: each runs a suite against a
// deliberately broken implementation in a child process and fails when
// the suite passes it.

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/mutanttest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

// finishAsGiven is a PaymentIDStore that keeps Finish's record as given,
// without setting Done, contrary to the contract ("keeps r ... as its
// record (r.Done set)"). x402.Middleware calls Finish with Done false
// (payment_id.go:229), so behind this store a retry of a finished payment
// would read "still running" forever.
type finishAsGiven struct {
	mu sync.Mutex
	m  map[string]*idEntry
}

type idEntry struct {
	rec   x402.PaymentIDRecord
	until time.Time
}

func (s *finishAsGiven) Begin(ctx context.Context, id, request string, now, until time.Time) (x402.PaymentIDRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return x402.PaymentIDRecord{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok && now.Before(e.until) {
		return e.rec, false, nil
	}
	if s.m == nil {
		s.m = map[string]*idEntry{}
	}
	s.m[id] = &idEntry{rec: x402.PaymentIDRecord{Request: request}, until: until}
	return s.m[id].rec, true, nil
}

func (s *finishAsGiven) Finish(ctx context.Context, id string, until, keep time.Time, r x402.PaymentIDRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok && e.until.Equal(until) {
		e.rec, e.until = r, keep // the mutation: r.Done is not set
	}
	return nil
}

func (s *finishAsGiven) Release(ctx context.Context, id string, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok && e.until.Equal(until) && !e.rec.Done {
		delete(s.m, id)
	}
	return nil
}

// TestPaymentIDStoreSuite_catchesFinishNotSettingDone: the suite should
// fail a store whose Finish does not set Done. Every Finish of the suite
// passes a record with Done already true, so it cannot tell.
func TestPaymentIDStoreSuite_catchesFinishNotSettingDone(t *testing.T) {
	if mutanttest.Child(t) {
		x402test.TestPaymentIDStore(t, func(*testing.T) x402.PaymentIDStore { return &finishAsGiven{} })
		return
	}
	mutanttest.MustFail(t, "Finish keeps r as given, Done not set")
}

// unfinishedByID is the memory ledger with Unfinished ordered by ID, not
// by HeldAt as the contract says ("oldest hold first (by HeldAt, then
// ID)"). The suite's payments have ids that sort as their HeldAt does.
type unfinishedByID struct{ x402.EscrowLedger }

func (l unfinishedByID) Unfinished(ctx context.Context, limit int) ([]x402.EscrowPayment, error) {
	all, err := l.EscrowLedger.Unfinished(ctx, 0)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b x402.EscrowPayment) int { return cmp.Compare(a.ID, b.ID) }) // the mutation: by ID only
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// TestEscrowLedgerSuite_catchesUnfinishedByID: the suite should fail a
// ledger whose Unfinished ignores HeldAt.
func TestEscrowLedgerSuite_catchesUnfinishedByID(t *testing.T) {
	if mutanttest.Child(t) {
		x402test.TestEscrowLedger(t, func(t *testing.T, now func() time.Time) x402.EscrowLedger {
			return unfinishedByID{&x402.MemoryEscrowLedger{Now: now}}
		})
		return
	}
	mutanttest.MustFail(t, "Unfinished ordered by ID, not HeldAt")
}

// aliasing is the memory ledger whose returned payments share their
// Payload with the ledger, contrary to "Returned payments share no
// memory with the store": a caller that changes a payment it got changes
// what every later Get returns.
type aliasing struct {
	x402.EscrowLedger
	mu       sync.Mutex
	payloads map[string][]byte
}

func (l *aliasing) share(p x402.EscrowPayment) x402.EscrowPayment {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.payloads == nil {
		l.payloads = map[string][]byte{}
	}
	if b, ok := l.payloads[p.ID]; ok {
		p.Payload = b // the mutation: the ledger's own bytes
	} else if p.ID != "" {
		l.payloads[p.ID] = p.Payload
	}
	return p
}

func (l *aliasing) Hold(ctx context.Context, p x402.EscrowPayment) (x402.EscrowPayment, bool, error) {
	got, first, err := l.EscrowLedger.Hold(ctx, p)
	if err != nil {
		return got, first, err
	}
	return l.share(got), first, nil
}

func (l *aliasing) Get(ctx context.Context, id string) (x402.EscrowPayment, error) {
	got, err := l.EscrowLedger.Get(ctx, id)
	if err != nil {
		return got, err
	}
	return l.share(got), nil
}

// TestEscrowLedgerSuite_catchesAliasing: the suite should fail a ledger
// whose returned payments share memory with it; it never modifies a
// returned payment.
func TestEscrowLedgerSuite_catchesAliasing(t *testing.T) {
	if mutanttest.Child(t) {
		x402test.TestEscrowLedger(t, func(t *testing.T, now func() time.Time) x402.EscrowLedger {
			return &aliasing{EscrowLedger: &x402.MemoryEscrowLedger{Now: now}}
		})
		return
	}
	mutanttest.MustFail(t, "returned payments share their Payload with the ledger")
}

// TestMutantsSanity: the wrappers really are broken (so that the tests
// above are about the suite, not the wrappers).
func TestMutantsSanity(t *testing.T) {
	ctx := context.Background()
	// finishAsGiven: a record finished as the middleware finishes it reads not done.
	s := &finishAsGiven{}
	now := time.Now()
	s.Begin(ctx, "pay_0123456789abcdef", "r", now, now.Add(time.Hour))
	s.Finish(ctx, "pay_0123456789abcdef", now.Add(time.Hour), now.Add(time.Hour), x402.PaymentIDRecord{Request: "r"})
	if r, _, _ := s.Begin(ctx, "pay_0123456789abcdef", "r", now, now.Add(time.Hour)); r.Done {
		t.Error("finishAsGiven set Done")
	}
	// unfinishedByID: a later hold with a smaller id comes first.
	l := unfinishedByID{&x402.MemoryEscrowLedger{Now: func() time.Time { return x402test.Payment(0, "1").HeldAt }}}
	early, late := x402test.Payment(2, "10"), x402test.Payment(1, "10")
	late.HeldAt = early.HeldAt.Add(time.Second)
	l.Hold(ctx, early)
	l.Hold(ctx, late)
	if got, _ := l.Unfinished(ctx, 0); len(got) != 2 || got[0].ID != late.ID {
		t.Error("unfinishedByID ordered by HeldAt")
	}
	// aliasing: changing a Get's payload changes the next Get's.
	a := &aliasing{EscrowLedger: &x402.MemoryEscrowLedger{Now: func() time.Time { return x402test.Payment(0, "1").HeldAt }}}
	p := x402test.Payment(1, "10")
	a.Hold(ctx, p)
	g, _ := a.Get(ctx, p.ID)
	g.Payload[0] = 'X'
	if g2, _ := a.Get(ctx, p.ID); g2.Payload[0] != 'X' {
		t.Error("aliasing does not alias")
	}
}
