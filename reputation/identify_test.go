package reputation_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestBook_Identify: the first identity and the same one again change
// nothing; another one forgets the session in every scope, and only it;
// going back to the first is a change again.
func TestBook_Identify(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b := newBook(t, store)
	other := reputation.Scope{Operation: "delegate_v3", Kind: "summary"}
	teach := func() {
		t.Helper()
		won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true, Confidence: 0.9}}
		for _, scope := range []reputation.Scope{leadScope, other} {
			for range 4 {
				if err := b.Feedback(ctx, scope, won, false); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	identify := func(session int64, identity string, want bool) {
		t.Helper()
		if changed, err := b.Identify(ctx, session, identity); err != nil || changed != want {
			t.Fatalf("Identify(%d, %q) = %v, %v; want %v", session, identity, changed, err, want)
		}
	}
	mine := []reputation.Key{
		{Session: 3}, {Session: 3, Operation: leadScope.Operation, Kind: leadScope.Kind},
		{Session: 3, Operation: other.Operation}, {Session: 3, Operation: other.Operation, Kind: other.Kind},
	}
	theirs := []reputation.Key{{Session: 1}, {Session: 2, Operation: other.Operation, Kind: other.Kind}}

	identify(3, "llama3.2:3b at localhost:11434", false)
	identify(1, "qwen2.5:3b at localhost:11434", false)
	teach()
	before := reputationtest.Load(t, store, append(mine, theirs...)...)
	identify(3, "llama3.2:3b at localhost:11434", false)
	if diff := cmp.Diff(before, reputationtest.Load(t, store, append(mine, theirs...)...)); diff != "" {
		t.Errorf("the same identity again moved records (-before +after):\n%s", diff)
	}
	if l, ok, err := b.Leader(ctx, leadScope, []int64{1, 2, 3}); err != nil || !ok || l.Session != 3 {
		t.Fatalf("before the change: leader %+v (%v, %v), want session 3", l, ok, err)
	}

	identify(3, "gemma2:2b at localhost:11434", true)
	if diff := cmp.Diff(make([]reputation.Record, len(mine)), reputationtest.Load(t, store, mine...)); diff != "" {
		t.Errorf("session 3's records after a new identity (-zero +got):\n%s", diff)
	}
	if diff := cmp.Diff(before[len(mine):], reputationtest.Load(t, store, theirs...)); diff != "" {
		t.Errorf("other sessions' records moved (-before +after):\n%s", diff)
	}
	if l, ok, err := b.Leader(ctx, leadScope, []int64{1, 2, 3}); err != nil || ok {
		t.Errorf("after the change: leader %+v (%v, %v), want none", l, ok, err)
	}
	identify(3, "gemma2:2b at localhost:11434", false)
	identify(1, "qwen2.5:3b at localhost:11434", false)
	teach()
	identify(3, "llama3.2:3b at localhost:11434", true)

	for _, s := range []int64{0, -3} {
		if _, err := b.Identify(ctx, s, "x"); !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("Identify(%d): %v, want ErrInvalid", s, err)
		}
	}
	if changed, err := b.Identify(ctx, 3, ""); !errors.Is(err, reputation.ErrInvalid) || changed {
		t.Errorf("Identify with an empty identity: %v, %v; want ErrInvalid", changed, err)
	}
	identify(3, "llama3.2:3b at localhost:11434", false) // the refusal recorded nothing
}

// TestBook_Identify_unsupported: over a store that cannot delete a
// session, a new identity is reported with errors.ErrUnsupported, and
// nothing is forgotten or recorded: the next call reports it again.
func TestBook_Identify_unsupported(t *testing.T) {
	ctx := context.Background()
	store := struct{ reputation.Store }{new(reputation.Memory)} // Load and Add only
	b := newBook(t, store)
	if changed, err := b.Identify(ctx, 3, "a"); err != nil || changed {
		t.Fatalf("first identity: %v, %v", changed, err)
	}
	if err := b.Feedback(ctx, leadScope, []reputation.Ballot{{Session: 3, Backed: true}}, true); err != nil {
		t.Fatal(err)
	}
	k := reputation.Key{Session: 3}
	before := reputationtest.Load(t, store, k)
	for range 2 {
		if changed, err := b.Identify(ctx, 3, "b"); !changed || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("a new identity over a store that cannot delete: %v, %v; want true, ErrUnsupported", changed, err)
		}
	}
	if diff := cmp.Diff(before, reputationtest.Load(t, store, k)); diff != "" {
		t.Errorf("records moved (-before +after):\n%s", diff)
	}
}

// failingDeleter is a Memory whose next DeleteSessions fails when fail
// is set.
type failingDeleter struct {
	*reputation.Memory
	fail bool
}

func (f *failingDeleter) DeleteSessions(ctx context.Context, sessions []int64) error {
	if f.fail {
		f.fail = false
		return errors.New("connection reset")
	}
	return f.Memory.DeleteSessions(ctx, sessions)
}

// TestBook_Identify_deleteFails: when forgetting a session whose worker
// changed fails, Identify reports the error, and the next Identify of
// the new worker finds the change again and forgets the session.
func TestBook_Identify_deleteFails(t *testing.T) {
	ctx := context.Background()
	store := &failingDeleter{Memory: new(reputation.Memory)}
	b := newBook(t, store)
	if _, err := b.Identify(ctx, 3, "old model"); err != nil {
		t.Fatal(err)
	}
	if err := b.Feedback(ctx, leadScope, []reputation.Ballot{{Session: 3, Backed: true}}, true); err != nil {
		t.Fatal(err)
	}
	store.fail = true
	if changed, err := b.Identify(ctx, 3, "new model"); !changed || err == nil {
		t.Fatalf("Identify with DeleteSessions failing = %v, %v; want true and the error", changed, err)
	}
	if changed, err := b.Identify(ctx, 3, "new model"); !changed || err != nil {
		t.Errorf("Identify again = %v, %v; want true, nil: the change was never applied", changed, err)
	}
	if diff := cmp.Diff([]reputation.Record{{}}, reputationtest.Load(t, store, reputation.Key{Session: 3})); diff != "" {
		t.Errorf("session 3 after its worker changed (-want +got):\n%s", diff)
	}
	if changed, err := b.Identify(ctx, 3, "new model"); changed || err != nil {
		t.Errorf("Identify once forgotten = %v, %v; want false, nil", changed, err)
	}
}

// loadHookStore is a Memory shared by servers whose next Load runs hook
// after reading, as though another server acted between this server's
// read and its write.
type loadHookStore struct {
	*reputation.Memory
	hook func()
}

func (s *loadHookStore) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	recs, err := s.Memory.Load(ctx, keys)
	if h := s.hook; h != nil {
		s.hook = nil
		h()
	}
	return recs, err
}

// TestBook_Identify_claimPastHorizon: a session's worker changed more
// times than the Book's horizon, and two servers sharing the store find
// its next change at once: B reads, then A claims the change, forgets
// the session and the new worker is taught; B then finds the change
// claimed and forgets nothing (the count it claims on still moves).
func TestBook_Identify_claimPastHorizon(t *testing.T) {
	ctx := context.Background()
	mem := new(reputation.Memory)
	a := newBook(t, mem)
	hs := &loadHookStore{Memory: mem}
	b := newBook(t, hs)
	const session = 7
	for i := range reputation.DefaultHorizon + 1 {
		if _, err := a.Identify(ctx, session, fmt.Sprintf("model %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	hs.hook = func() {
		if changed, err := a.Identify(ctx, session, "new model"); err != nil || !changed {
			t.Errorf("A: Identify = %v, %v; want true", changed, err)
		}
		if err := a.Feedback(ctx, leadScope, []reputation.Ballot{{Session: session, Backed: true}}, true); err != nil {
			t.Error(err)
		}
	}
	changed, err := b.Identify(ctx, session, "new model")
	if err != nil || changed {
		t.Errorf("B: Identify = %v, %v; want false, nil: A claimed the change", changed, err)
	}
	taught := reputation.Key{Session: session, Operation: leadScope.Operation}
	if got := reputationtest.Load(t, mem, taught); got[0] == (reputation.Record{}) {
		t.Errorf("the new worker's record after B's Identify = %+v; want what A's report taught", got[0])
	}
}

// deleteHookStore is a Memory shared by servers that runs hook once right
// after a DeleteSessions, as though another server acted at that moment.
type deleteHookStore struct {
	*reputation.Memory
	hook func()
}

func (s *deleteHookStore) DeleteSessions(ctx context.Context, sessions []int64) error {
	err := s.Memory.DeleteSessions(ctx, sessions)
	if h := s.hook; h != nil {
		s.hook = nil
		h()
	}
	return err
}

// TestBook_Identify_neverWithoutIdentity: while server A forgets a
// session whose worker it found changed, the session keeps the identity
// A recorded, so that server B identifying another worker at that moment
// finds a change too, and the two workers never both pass as the one
// recorded.
func TestBook_Identify_neverWithoutIdentity(t *testing.T) {
	ctx := context.Background()
	mem := new(reputation.Memory)
	hs := &deleteHookStore{Memory: mem}
	a := newBook(t, hs)
	b := newBook(t, mem)
	const session = 7
	if _, err := a.Identify(ctx, session, "old model"); err != nil {
		t.Fatal(err)
	}
	var bChanged bool
	hs.hook = func() {
		var err error
		if bChanged, err = b.Identify(ctx, session, "model Y"); err != nil {
			t.Error(err)
		}
	}
	aChanged, err := a.Identify(ctx, session, "model X")
	if err != nil {
		t.Fatal(err)
	}
	if !aChanged || !bChanged {
		t.Errorf("A: old model -> model X changed = %v; B, as A forgets: -> model Y changed = %v; want both true", aChanged, bChanged)
	}
	// B's worker, recorded last, is the session's; A's is a change again.
	for _, id := range []struct {
		identity string
		changed  bool
	}{{"model Y", false}, {"model X", true}} {
		if changed, err := a.Identify(ctx, session, id.identity); err != nil || changed != id.changed {
			t.Errorf("afterwards Identify(%q) = %v, %v; want %v", id.identity, changed, err, id.changed)
		}
	}
}

// TestBook_Identify_firstAtOnce: two servers sharing the store identify
// a session never identified with two workers at once; one records the
// first identity, and the other finds a change.
func TestBook_Identify_firstAtOnce(t *testing.T) {
	ctx := context.Background()
	mem := new(reputation.Memory)
	a := newBook(t, mem)
	hs := &loadHookStore{Memory: mem}
	b := newBook(t, hs)
	hs.hook = func() {
		if changed, err := a.Identify(ctx, 7, "model X"); err != nil || changed {
			t.Errorf("A: Identify = %v, %v; want false, nil", changed, err)
		}
	}
	if changed, err := b.Identify(ctx, 7, "model Y"); err != nil || !changed {
		t.Errorf("B: Identify = %v, %v; want true, nil: A recorded model X", changed, err)
	}
}

// TestBook_Identify_formerLayout: a store written before identities were
// records of the panel kept them under the session itself; Identify
// still reads them: the same worker changes nothing, another one is a
// change, forgets the session and is found recorded afterwards.
func TestBook_Identify_formerLayout(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b := newBook(t, store)
	const session = 3
	sum := sha256.Sum256([]byte("old model"))
	one := reputation.Record{Right: 1}
	err := store.Add(ctx, reputation.DefaultHorizon, []reputation.Delta{
		{Key: reputation.Key{Session: session, Operation: "worker identity"}, Delta: one},
		{Key: reputation.Key{Session: session, Operation: "worker identity", Kind: hex.EncodeToString(sum[:16])}, Delta: one},
		{Key: reputation.Key{Session: reputation.PanelSession, Operation: "worker identity", Kind: "3"}, Delta: reputation.Record{Right: 2}},
		{Key: reputation.Key{Session: session}, Delta: reputation.Record{Right: 5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	identify := func(identity string, want bool) {
		t.Helper()
		if changed, err := b.Identify(ctx, session, identity); err != nil || changed != want {
			t.Fatalf("Identify(%q) = %v, %v; want %v", identity, changed, err, want)
		}
	}
	identify("old model", false)
	if got := reputationtest.Load(t, store, reputation.Key{Session: session}); got[0] != (reputation.Record{Right: 5}) {
		t.Errorf("session %d after the same worker = %+v; want its record kept", session, got[0])
	}
	identify("new model", true)
	if got := reputationtest.Load(t, store, reputation.Key{Session: session}); got[0] != (reputation.Record{}) {
		t.Errorf("session %d after a new worker = %+v; want it forgotten", session, got[0])
	}
	identify("new model", false)
	identify("old model", true)
}
