package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// equalSessions returns n sessions that each err rate percent of the
// time, on claims of their own (offWorker): equal in all but luck.
func equalSessions(n int, rate uint32) []router.Session {
	sessions := make([]router.Session, n)
	for i := range sessions {
		sessions[i] = router.Session{ID: router.SessionID(i + 1), Worker: offWorker(rate)}
	}
	return sessions
}

// TestEngine_equalSessionsShareRuns: five equal sessions share the runs
// of 200 calls of three replicas (600 runs) evenly: each session's runs
// within 20% of its fair share of 120 (without the rotation of equal sessions
// they received 9 / 145 / 225 / 211 / 10 runs). The workload is deterministic: each
// session errs on 10% of the claims, by a hash of the session and the
// claim.
func TestEngine_equalSessionsShareRuns(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEngine(t, equalSessions(5, 10), router.WithEngineClock(func() time.Time { return clock }))
	runs := map[router.SessionID]int{}
	const calls, replicas = 200, 3
	for i := range calls {
		req := validateV3(replicas, router.DisagreeReturnAll)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"equal %d"`, i))
		resp, err := e.ValidateV3(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Evidence.Runs {
			runs[r.SessionID]++
		}
	}
	t.Logf("runs per session %v", runs)
	fair := float64(calls*replicas) / 5
	for id := router.SessionID(1); id <= 5; id++ {
		if n := float64(runs[id]); n < 0.8*fair || n > 1.2*fair {
			t.Errorf("session %d ran %v times, outside [%v, %v] (runs per session %v)", id, n, 0.8*fair, 1.2*fair, runs)
		}
	}
}

// TestEngine_newSessionEarnsARecord: a session never seen, beside four
// that have a record of 300 calls, runs within its first
// DefaultExploreEvery calls and then takes its turn while its record is
// within noise of theirs: over the next 50 calls of three replicas it
// runs at least a fifth of the runs it would run in rotation (3 of every
// 5 calls).
func TestEngine_newSessionEarnsARecord(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEngine(t, equalSessions(5, 10), router.WithEngineClock(func() time.Time { return clock }))
	for i := range 300 {
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.SessionPool = []router.SessionID{1, 2, 3, 4}
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"old %d"`, i))
		if _, err := e.ValidateV3(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	first, runs := -1, 0
	const calls = 50
	for i := range calls {
		req := validateV3(3, router.DisagreeReturnAll)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"new %d"`, i))
		resp, err := e.ValidateV3(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Evidence.Runs {
			if r.SessionID == 5 {
				runs++
				if first < 0 {
					first = i
				}
			}
		}
	}
	if first < 0 || first >= router.DefaultExploreEvery {
		t.Errorf("the new session first ran in call %d, want within the first %d", first, router.DefaultExploreEvery)
	}
	if want := calls * 3 / 5 / 5; runs < want {
		t.Errorf("the new session ran %d times in %d calls, want at least %d", runs, calls, want)
	}
	t.Logf("the new session first ran in call %d, and %d times in %d calls", first, runs, calls)
}

// TestEngine_outcomesPutTheBetterSessionFirst: six reported outcomes,
// all right for session 1 and half right for sessions 2 to 5 (each
// counted beside the outcome prior), make session 1 the likely best,
// though within three standard deviations of the others; single-replica
// calls then run it up to the share bound (DefaultMaxShare), where
// ties in rotation would give it one call in five.
func TestEngine_outcomesPutTheBetterSessionFirst(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEngine(t, equalSessions(5, 10), router.WithEngineClock(func() time.Time { return clock }))
	ctx := context.Background()
	scope := router.Scope(router.KindValidate, "summary")
	for i := range 6 {
		ballots := []reputation.Ballot{{Session: 1, Backed: true}}
		for s := int64(2); s <= 5; s++ {
			ballots = append(ballots, reputation.Ballot{Session: s, Backed: i%2 == 0, Opposed: i%2 != 0})
		}
		if err := e.Reputation().Feedback(ctx, scope, ballots, true); err != nil {
			t.Fatal(err)
		}
	}
	runs := map[router.SessionID]int{}
	const calls = 200
	for i := range calls {
		req := validateV3(1, router.DisagreeBestEffort)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"ranked %d"`, i))
		resp, err := e.ValidateV3(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		runs[resp.Evidence.Runs[0].SessionID]++
	}
	if share := float64(runs[1]) / calls; share < router.DefaultMaxShare-0.05 {
		t.Errorf("session 1 ran %.2f of the calls, want about the share bound %v (runs per session %v)", share, router.DefaultMaxShare, runs)
	}
}

// TestEngine_Order checks that Order, given the evidence a caller read,
// orders sessions as Rank does after reading it itself: two engines in
// the same state, one ranking and one ordering, give the same order call
// after call, with outcomes that tell the sessions apart, and an id the
// engines do not know stays last.
func TestEngine_Order(t *testing.T) {
	ctx := context.Background()
	scope := router.Scope(router.KindValidate, "summary")
	engine := func() *router.Engine {
		e := newEngine(t, equalSessions(5, 10))
		for i := range 6 {
			ballots := []reputation.Ballot{{Session: 2, Backed: true}}
			for s := int64(1); s <= 5; s++ {
				if s != 2 {
					ballots = append(ballots, reputation.Ballot{Session: s, Backed: i%2 == 0, Opposed: i%2 != 0})
				}
			}
			if err := e.Reputation().Feedback(ctx, scope, ballots, true); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	ranks, orders := engine(), engine()
	ids := []router.SessionID{1, 2, 3, 4, 5, 99}
	firsts := map[router.SessionID]int{}
	for i := range 50 {
		want, rel, err := ranks.Rank(ctx, scope, ids)
		if err != nil {
			t.Fatal(err)
		}
		known := []int64{1, 2, 3, 4, 5}
		rel2, evidence, err := orders.Reputation().Evidence(ctx, scope, known)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rel, rel2); diff != "" {
			t.Fatalf("call %d: the two books differ (-rank +order):\n%s", i, diff)
		}
		got := orders.Order(ids, rel2, evidence)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("call %d: Order against Rank (-rank +order):\n%s", i, diff)
		}
		if got[len(got)-1] != 99 {
			t.Fatalf("call %d: the unknown id is not last: %v", i, got)
		}
		firsts[got[0]]++
	}
	if firsts[2] < 10 {
		t.Errorf("session 2, the one outcomes show best, came first on %d calls of 50: %v", firsts[2], firsts)
	}
	off := newEngine(t, equalSessions(2, 10), router.WithReputation(nil))
	if got := off.Order([]router.SessionID{2, 1}, consensus.Reliabilities{}, nil); !slices.Equal(got, []router.SessionID{2, 1}) {
		t.Errorf("reputation off: %v, want the ids unchanged", got)
	}
}

// TestEngine_Order_beforeAnyOutcome checks that sessions nothing tells
// apart keep the caller's order, and that one outcome ends it.
func TestEngine_Order_beforeAnyOutcome(t *testing.T) {
	ctx := context.Background()
	scope := router.Scope(router.KindValidate, "summary")
	e := newEngine(t, equalSessions(5, 10))
	for _, ids := range [][]router.SessionID{{1, 2, 3, 4, 5}, {3, 4, 5, 1, 2}, {5, 1, 2, 3, 4}, {2, 99, 1}} {
		for range 3 {
			got, _, err := e.Rank(ctx, scope, ids)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(ids)
			if ids[1] == 99 {
				want = []router.SessionID{2, 1, 99} // an unknown id last
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Rank(%v) before any outcome (-want +got):\n%s", ids, diff)
			}
		}
	}
	// Session 5 right where the others were wrong: it tells apart.
	ballots := []reputation.Ballot{{Session: 5, Opposed: true}}
	for s := int64(1); s <= 4; s++ {
		ballots = append(ballots, reputation.Ballot{Session: s, Backed: true})
	}
	if err := e.Reputation().Feedback(ctx, scope, ballots, false); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for range 20 {
		got, _, err := e.Rank(ctx, scope, []router.SessionID{1, 2, 3, 4, 5})
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 1 {
			moved++
		}
	}
	if moved == 0 {
		t.Error("after an outcome that tells session 5 apart, Rank kept the caller's order on 20 calls of 20")
	}
}
