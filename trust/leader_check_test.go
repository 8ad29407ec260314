package trust_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// luckyLeader returns an engine of two sessions, of which session 1, that
// always answers VALID, leads by four early wins over session 2, that
// always answers INVALID and was wrong on four more early calls of its
// own, and the book the engine keeps.
func luckyLeader(t *testing.T) (*router.Engine, *reputation.Book) {
	t.Helper()
	return luckyLeaderOn(t, nil)
}

// luckyLeaderOn is luckyLeader with its book over store (nil for one in
// memory).
func luckyLeaderOn(t *testing.T, store reputation.Store) (*router.Engine, *reputation.Book) {
	t.Helper()
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := router.NewEngine(routertest.Sessions(1, 1, verdictOf(router.VerdictValid), verdictOf(router.VerdictInvalid)), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	scope := router.Scope(router.KindValidate, request(trust.ModeValidation, trust.PolicyAdaptive).Task.Type)
	won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}}
	for range 4 {
		if err := book.Feedback(context.Background(), scope, won, true); err != nil {
			t.Fatal(err)
		}
		if err := book.Feedback(context.Background(), scope, []reputation.Ballot{{Session: 2, Backed: true}}, false); err != nil {
			t.Fatal(err)
		}
	}
	return e, book
}

// TestService_leaderCheck: a session leads by luck and is then wrong on
// every call, which the caller reports. With one led call in two
// checked, the verdict stays the leader's, the check is a step of its
// own that is neither counted nor charged, and the outcomes teach
// session 2's reliability, so the lead ends sooner than with no check,
// where only the leader's own falling reliability ends it. The leader's
// record against the others never moves.
func TestService_leaderCheck(t *testing.T) {
	checked, checks := leadLasts(t, 2)
	unchecked, none := leadLasts(t, 0)
	t.Logf("the lead lasted %d calls checking one in two (%d checks), %d checking none", checked, checks, unchecked)
	if checks == 0 || none != 0 || checked >= unchecked {
		t.Errorf("checking one led call in two: the lead lasted %d calls, %d checked; with none, %d calls, %d checked",
			checked, checks, unchecked, none)
	}
	if _, err := trust.New(newEngine(t, verdictOf(router.VerdictValid)), trust.WithLeaderCheck(-1)); err == nil {
		t.Error("WithLeaderCheck(-1) accepted")
	}
}

// leadLasts calls a luckyLeader service that checks one led call in
// every (WithLeaderCheck), reporting each led call wrong, until a call
// is not led, and returns how many were, and how many of them checked.
func leadLasts(t *testing.T, every int) (led, checks int) {
	t.Helper()
	ctx := context.Background()
	e, _ := luckyLeader(t)
	s, err := trust.New(e, trust.WithLeaderCheck(every))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyAdaptive)
	for i := 1; i <= 50; i++ {
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Evidence.Leader == nil {
			if resp.Evidence.Checked != 0 {
				t.Errorf("every %d, call %d, not led: %d checked", every, i, resp.Evidence.Checked)
			}
			return i - 1, checks
		}
		if diff := cmp.Diff(&reputation.Lead{Session: 1, Won: 4}, resp.Evidence.Leader, recordOnly); diff != "" {
			t.Fatalf("every %d, call %d: leader (-want +got):\n%s", every, i, diff)
		}
		if resp.Status != trust.StatusValid || resp.Evidence.Launched != 1 || len(resp.Evidence.Verdicts) != 1 || len(resp.Evidence.Disagreements) != 0 {
			t.Errorf("every %d, call %d: status %s, %d launched, verdicts %v, %d disagreements; want the leader's VALID alone",
				every, i, resp.Status, resp.Evidence.Launched, resp.Evidence.Verdicts, len(resp.Evidence.Disagreements))
		}
		wantSteps := 1
		if every > 0 && i%every == 0 {
			wantSteps = 2
			checks++
			check := resp.Evidence.Steps[len(resp.Evidence.Steps)-1]
			if !check.Check || check.Outcome != string(router.VerdictInvalid) || !cmp.Equal(check.Sessions, []router.SessionID{2}) {
				t.Errorf("every %d, call %d: check step %+v; want session 2's INVALID", every, i, check)
			}
		}
		if len(resp.Evidence.Steps) != wantSteps || resp.Evidence.Checked != wantSteps-1 {
			t.Errorf("every %d, call %d: %d steps, %d checked; want %d steps", every, i, len(resp.Evidence.Steps), resp.Evidence.Checked, wantSteps)
		}
		if err := s.Feedback(ctx, resp.TraceID, false); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("every %d: the lead lasted 50 calls and %d checks", every, checks)
	return 0, 0
}

// TestService_leaderCheck_receipt: the receipt of a checked call records
// the runs its verdict counts, the leader's, and not the check.
func TestService_leaderCheck_receipt(t *testing.T) {
	e, _ := luckyLeader(t)
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSigningKey(priv), trust.WithLeaderCheck(1))
	if err != nil {
		t.Fatal(err)
	}
	resp, r := callInline(t, s, trust.PolicyAdaptive, pub)
	if resp.Evidence.Leader == nil || resp.Evidence.Checked != 1 {
		t.Fatalf("leader %+v, %d checked; want a checked led call", resp.Evidence.Leader, resp.Evidence.Checked)
	}
	if r.CortensorRefs == nil || !cmp.Equal(r.CortensorRefs.Sessions, []int64{1}) || r.ConsensusSnapshot == nil || len(r.ConsensusSnapshot.Verdicts) != 1 {
		t.Errorf("receipt's refs %+v and consensus %+v; want the leader's session and verdict alone", r.CortensorRefs, r.ConsensusSnapshot)
	}
}

// TestService_leaderCheck_reportedOnce: a checked led call reported by
// its trace id and by its receipt id, on the server that made it or on
// another sharing its book's store and its receipts, counts once,
// though its receipt leaves the check out.
func TestService_leaderCheck_reportedOnce(t *testing.T) {
	type report struct {
		server    int
		byReceipt bool
	}
	for _, reports := range [][2]report{
		{{0, false}, {0, true}},
		{{0, true}, {0, false}},
		{{0, false}, {1, true}},
		{{1, true}, {0, false}},
	} {
		store := new(reputation.Memory)
		e, _ := luckyLeaderOn(t, store)
		other, err := reputation.New(store, reputation.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := router.NewEngine(routertest.Sessions(1, 1, verdictOf(router.VerdictValid), verdictOf(router.VerdictInvalid)), router.WithReputation(other))
		if err != nil {
			t.Fatal(err)
		}
		pub, priv, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		signer, err := receipt.NewEd25519Signer(priv)
		if err != nil {
			t.Fatal(err)
		}
		receipts := new(receipt.MemStore)
		var servers []*trust.Service
		for _, engine := range []*router.Engine{e, f} {
			s, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: receipts}), trust.WithLeaderCheck(1))
			if err != nil {
				t.Fatal(err)
			}
			servers = append(servers, s)
		}
		resp, r := callInline(t, servers[0], trust.PolicyAdaptive, pub)
		if resp.Evidence.Leader == nil || resp.Evidence.Checked != 1 {
			t.Fatalf("leader %+v, %d checked; want a checked led call", resp.Evidence.Leader, resp.Evidence.Checked)
		}
		ctx := context.Background()
		keys := []reputation.Key{{Session: 1}, {Session: 2}}
		var got [2][]reputation.Record
		for i, rep := range reports {
			id := resp.TraceID
			if rep.byReceipt {
				id = r.ReceiptID
			}
			if err := servers[rep.server].Feedback(ctx, id, false); err != nil {
				t.Fatal(err)
			}
			got[i] = reputationtest.Load(t, store, keys...)
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("reports %+v: the second counted again (-once +twice):\n%s", reports, diff)
		}
	}
}
