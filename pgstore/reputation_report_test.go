package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// reportServer is what one server holds to take reports: a book over its
// own connection to the shared database, and its own ledger of calls.
type reportServer struct {
	book   *reputation.Book
	ledger *reputation.Ledger
}

// reportServers opens n servers on one database, and a store over a
// connection of its own to read what they recorded.
func reportServers(t *testing.T, n int) ([]reportServer, reputation.Store) {
	t.Helper()
	dbs := openDBs(t, n+1)
	servers := make([]reportServer, n)
	for i := range servers {
		book, err := reputation.New(dbs[i].Reputation(), reputation.Options{})
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = reportServer{book: book, ledger: reputation.NewLedger(100)}
	}
	return servers, dbs[n].Reputation()
}

var (
	reportScope = reputation.Scope{Operation: "validate_v3", Kind: "summary"}
	reportKeys  = []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	// reportAt is when the calls were made: every server holding a call
	// names the time it was made, as a call rebuilt from its receipt
	// does.
	reportAt = time.Now().Truncate(time.Millisecond)
)

// reportCall is a call of three voters, the third dissenting.
func reportCall() reputation.Call {
	return reputation.Call{Scope: reportScope, Ballots: []reputation.Ballot{
		{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true},
	}, At: reportAt}
}

// wantAfterReports returns the session records after reports, in order,
// on one call through one ledger over one store: what one server makes
// of them.
func wantAfterReports(t *testing.T, reports ...bool) []reputation.Record {
	t.Helper()
	ctx := context.Background()
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := reputation.NewLedger(1)
	l.PutCall("alice", "t", reportCall())
	for _, right := range reports {
		if _, err := l.Report(ctx, book, "alice", "t", right); err != nil {
			t.Fatal(err)
		}
	}
	return reputationtest.Load(t, store, reportKeys...)
}

// TestReputationStore_reportsReplacedAcrossServers: two servers sharing
// one database hold the same call in their ledgers (one ran it, the other
// rebuilt it from its receipt). A report on the first, the opposite on
// the second, then the first again on the first leave the records as one
// server leaves them: the last report replaced the one before, each
// time, and none counts twice.
func TestReputationStore_reportsReplacedAcrossServers(t *testing.T) {
	ctx := context.Background()
	servers, store := reportServers(t, 2)
	for _, s := range servers {
		s.ledger.KeepCall("alice", "t", reportCall())
	}
	reports := []struct {
		server int
		right  bool
	}{{0, false}, {1, true}, {0, false}, {1, false}, {0, true}}
	var made []bool
	for _, r := range reports {
		if _, err := servers[r.server].ledger.Report(ctx, servers[r.server].book, "alice", "t", r.right); err != nil {
			t.Fatal(err)
		}
		made = append(made, r.right)
		if diff := cmp.Diff(wantAfterReports(t, made...), reputationtest.Load(t, store, reportKeys...)); diff != "" {
			t.Fatalf("after the reports %v, the last on server %d (-one server +two):\n%s", made, r.server, diff)
		}
	}
}

// TestReputationStore_concurrentReportsCountOnce: the same report of a
// call made at once on three servers sharing one database, each holding
// the call, counts once, as it does on one server.
func TestReputationStore_concurrentReportsCountOnce(t *testing.T) {
	ctx := context.Background()
	servers, store := reportServers(t, 3)
	const calls = 20
	for i := range calls {
		call := reportCall()
		call.Ballots = append(call.Ballots, reputation.Ballot{Session: int64(10 + i), Backed: true})
		id := fmt.Sprintf("t%d", i)
		for _, s := range servers {
			s.ledger.KeepCall("alice", id, call)
		}
		var wg sync.WaitGroup
		for _, s := range servers {
			wg.Go(func() {
				if _, err := s.ledger.Report(ctx, s.book, "alice", id, false); err != nil {
					t.Errorf("Report: %v", err)
				}
			})
		}
		wg.Wait()
	}
	w := float64(reputation.DefaultFeedbackWeight)
	got := reputationtest.Load(t, store, reportKeys...)
	// Each call's report, made once, adds w to the backers' Wrong; the
	// dissenter, right against a wrong winner, gains w Right.
	want := []reputation.Record{{Wrong: calls * w}, {Wrong: calls * w}, {Right: calls * w}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a == b || (a-b)*(a-b) < 1e-12 })); diff != "" {
		t.Errorf("%d calls each reported wrong on three servers at once (-once +got):\n%s", calls, diff)
	}
}
