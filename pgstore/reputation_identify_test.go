package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestReputationStore_identifyOnceAcrossServers: three servers sharing
// one database start at once with a new worker behind a session. One of
// them forgets the session; the others find the new identity recorded
// and report no change, so that none forgets what another server taught
// after its own start.
func TestReputationStore_identifyOnceAcrossServers(t *testing.T) {
	ctx := context.Background()
	servers, _ := reportServers(t, 3)
	const rounds = 10
	for session := int64(1); session <= rounds; session++ {
		if _, err := servers[0].book.Identify(ctx, session, "llama3.2:3b"); err != nil {
			t.Fatal(err)
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			changed int
		)
		for _, s := range servers {
			wg.Go(func() {
				c, err := s.book.Identify(ctx, session, "gemma2:2b")
				if err != nil {
					t.Errorf("Identify: %v", err)
				}
				if c {
					mu.Lock()
					changed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if changed != 1 {
			t.Errorf("session %d: %d of three servers identifying its new worker at once forgot it; want one", session, changed)
		}
	}
}

// lostAckStore is a server's reputation store whose next AddIf is applied
// in the database but answers an error, as when the connection drops
// while the transaction commits: the server cannot tell whether it
// landed.
type lostAckStore struct {
	*pgstore.ReputationStore
	lose bool
}

func (s *lostAckStore) AddIf(ctx context.Context, horizon float64, cond reputation.Key, want reputation.Record, deltas []reputation.Delta) (bool, error) {
	ok, err := s.ReputationStore.AddIf(ctx, horizon, cond, want, deltas)
	if s.lose && err == nil {
		s.lose = false
		return false, errors.New("pgstore: adding reputation evidence: unexpected EOF")
	}
	return ok, err
}

// TestReputationStore_identifyAfterALostCommit: a server records a
// session's new worker, but the commit's answer is lost, so Identify
// fails though the identity landed. The next Identify of that worker,
// on another server, still finds the change and forgets the session, and
// the one after it finds nothing more to forget: the change is not lost
// with the answer.
func TestReputationStore_identifyAfterALostCommit(t *testing.T) {
	ctx := context.Background()
	dbs := openDBs(t, 2)
	lossy := &lostAckStore{ReputationStore: dbs[0].Reputation()}
	a, err := reputation.New(lossy, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := reputation.New(dbs[1].Reputation(), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const session = 7
	scope := reputation.Scope{Operation: "validate_v3", Kind: "summary"}
	if _, err := a.Identify(ctx, session, "llama3.2:3b"); err != nil {
		t.Fatal(err)
	}
	if err := a.Feedback(ctx, scope, []reputation.Ballot{{Session: session, Backed: true}}, true); err != nil {
		t.Fatal(err)
	}
	lossy.lose = true
	if _, err := a.Identify(ctx, session, "gemma2:2b"); err == nil {
		t.Fatal("Identify whose commit was lost reported no error")
	}
	if changed, err := b.Identify(ctx, session, "gemma2:2b"); !changed || err != nil {
		t.Errorf("Identify on another server after the lost commit = %v, %v; want true, nil: the session was never forgotten", changed, err)
	}
	if changed, err := a.Identify(ctx, session, "gemma2:2b"); changed || err != nil {
		t.Errorf("Identify again on the first server = %v, %v; want false, nil: the change was applied once", changed, err)
	}
	got := reputationtest.Load(t, dbs[1].Reputation(), reputation.Key{Session: session}, reputation.Key{Session: session, Operation: scope.Operation})
	if diff := cmp.Diff([]reputation.Record{{}, {}}, got); diff != "" {
		t.Errorf("records of the session whose worker changed (-want +got):\n%s", diff)
	}
}
