package reputation_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestLedger_callersKeptApart: one caller's stream of calls forgets its
// own oldest calls, never another caller's, once it holds the most: bob's
// call stays reportable by its trace id however many calls alice makes.
func TestLedger_callersKeptApart(t *testing.T) {
	l := reputation.NewLedger(4)
	l.Put("bob", "b1", scope, nil)
	for i := range 100 {
		l.Put("alice", fmt.Sprint("a", i), scope, nil)
	}
	if _, _, ok := l.Get("bob", "b1"); !ok {
		t.Error("alice's calls made bob's call b1 forgotten")
	}
	for i := 97; i < 100; i++ {
		if _, _, ok := l.Get("alice", fmt.Sprint("a", i)); !ok {
			t.Errorf("alice's latest call a%d forgotten", i)
		}
	}
	if _, _, ok := l.Get("alice", "a96"); ok {
		t.Error("a96 is remembered beyond the bound")
	}
	// A new caller gets room from the caller holding the most.
	l.Put("carol", "c1", scope, nil)
	if _, _, ok := l.Get("carol", "c1"); !ok {
		t.Error("carol's call forgotten")
	}
	if _, _, ok := l.Get("bob", "b1"); !ok {
		t.Error("carol's call made bob's call forgotten")
	}
	if _, _, ok := l.Get("alice", "a97"); ok {
		t.Error("a97, alice's oldest, should have made room for carol's")
	}
}

// TestLedger_addressesOfOnePrefixAreOneCaller: an anonymous caller that
// takes a new IPv6 address of its /64 for every call holds its calls as
// one caller, so it forgets its own, never bob's; each address still
// finds its own calls only.
func TestLedger_addressesOfOnePrefixAreOneCaller(t *testing.T) {
	l := reputation.NewLedger(4)
	l.Put("bob", "b1", scope, nil)
	l.Put("bob", "b2", scope, nil)
	for i := range 50 {
		l.Put(fmt.Sprintf("ip:2001:db8::%x", i+1), "t", scope, nil)
	}
	for _, id := range []string{"b1", "b2"} {
		if _, _, ok := l.Get("bob", id); !ok {
			t.Errorf("50 addresses of one /64 made bob's call %s forgotten", id)
		}
	}
	if _, _, ok := l.Get("ip:2001:db8::32", "t"); !ok {
		t.Error("the latest address's call is forgotten")
	}
	if _, _, ok := l.Get("ip:2001:db8::31", "t"); !ok {
		t.Error("the next latest address's call is forgotten")
	}
	if _, _, ok := l.Get("ip:2001:db8::30", "t"); ok {
		t.Error("the prefix holds a third call in a ledger of 4 beside bob's two")
	}
	if _, _, ok := l.Get("ip:2001:db8::31", "other"); ok {
		t.Error("an address finds a call it did not make")
	}
}

// TestLedger_reportOnceAfterForgetting: a call the ledger forgot and
// remembers again (as a report by receipt rebuilds it) counts its report
// once: the report is kept in the book's store, not only in memory.
func TestLedger_reportOnceAfterForgetting(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b := newBook(t, store)
	keys := []reputation.Key{{Session: 1}, {Session: 2}}
	load := func() []reputation.Record {
		t.Helper()
		recs, err := store.Load(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	// Rebuilt from its receipt, the call names the time it was made.
	call := reputation.Call{Scope: scope, Ballots: []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2}}, At: time.Now()}
	l := reputation.NewLedger(1)
	l.PutCall("alice", "t1", call)
	if _, err := l.Report(ctx, b, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	once := load()
	l.PutCall("alice", "t2", reputation.Call{Scope: scope}) // forgets t1
	if _, ok := l.Call("alice", "t1"); ok {
		t.Fatal("t1 is remembered beyond the bound")
	}
	l.KeepCall("alice", "t1", call) // rebuilt, as from its receipt
	if _, err := l.Report(ctx, b, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, load()); diff != "" {
		t.Errorf("the same report after forgetting counted twice (-once +twice):\n%s", diff)
	}
	// The opposite report replaces the first, as it does in memory.
	if _, err := l.Report(ctx, b, "alice", "t1", false); err != nil {
		t.Fatal(err)
	}
	w := float64(reputation.DefaultFeedbackWeight)
	if diff := cmp.Diff([]reputation.Record{{Wrong: w}, {}}, load()); diff != "" { // a dissenter gains nothing when the winner was wrong
		t.Errorf("the replacing report (-want +got):\n%s", diff)
	}
}

// TestLedger_reportWindow: a report on a call made longer ago than the
// Book's report window learns nothing, and Report says it found no call;
// what was reported on a call of an older week than the window and a
// week more is forgotten as a later report sweeps, so that the same
// report on that call, were it taken, would count again.
func TestLedger_reportWindow(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b := newBook(t, store)
	load := func() reputation.Record {
		t.Helper()
		recs, err := store.Load(ctx, []reputation.Key{{Session: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return recs[0]
	}
	ballots := []reputation.Ballot{{Session: 1, Backed: true}}
	l := reputation.NewLedger(10)
	window := b.Options().ReportWindow
	l.KeepCall("alice", "old", reputation.Call{Scope: scope, Ballots: ballots, At: time.Now().Add(-window - time.Minute)})
	if ok, err := l.Report(ctx, b, "alice", "old", true); ok || err != nil {
		t.Errorf("Report on a call older than the window = %v, %v; want false, nil", ok, err)
	}
	if got := load(); got != (reputation.Record{}) {
		t.Errorf("a report on a call older than the window learned %+v", got)
	}

	// A call of 30 days ago, reported within the window, counts once.
	l.KeepCall("alice", "month", reputation.Call{Scope: scope, Ballots: ballots, At: time.Now().Add(-30 * 24 * time.Hour)})
	for range 2 {
		if ok, err := l.Report(ctx, b, "alice", "month", true); !ok || err != nil {
			t.Fatalf("Report = %v, %v", ok, err)
		}
	}
	w := float64(reputation.DefaultFeedbackWeight)
	if got := load(); got != (reputation.Record{Right: w}) {
		t.Fatalf("after the report made twice: %+v, want Right %v", got, w)
	}
	// A Book over the same store whose window is a day (Books sharing a
	// store share their window; this one plays the later day when the
	// call is out of the window) forgets that report as it takes one.
	short, err := reputation.New(store, reputation.Options{ReportWindow: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l.KeepCall("alice", "now", reputation.Call{Scope: scope, Ballots: []reputation.Ballot{{Session: 2, Backed: true}}})
	if ok, err := l.Report(ctx, short, "alice", "now", true); !ok || err != nil {
		t.Fatalf("Report = %v, %v", ok, err)
	}
	if ok, err := l.Report(ctx, b, "alice", "month", true); !ok || err != nil {
		t.Fatalf("Report = %v, %v", ok, err)
	}
	if got := load(); got != (reputation.Record{Right: 2 * w}) {
		t.Errorf("the report on a call swept out of a day's window, made again: %+v, want Right %v (counted anew)", got, 2*w)
	}
	if _, err := reputation.New(nil, reputation.Options{ReportWindow: -time.Hour}); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("New with a negative report window = %v, want ErrInvalid", err)
	}
}

// TestLedger: a call is remembered under its caller and id, replaced by
// Put, kept by Keep, and the oldest forgotten beyond the bound.
func TestLedger(t *testing.T) {
	l := reputation.NewLedger(2)
	b := []reputation.Ballot{{Session: 1, Backed: true}}
	l.Put("alice", "a", scope, b)
	l.Put("alice", "b", scope, nil)
	l.Put("alice", "a", reputation.Scope{Operation: "x"}, b) // replaces, forgets nothing
	if sc, got, ok := l.Get("alice", "a"); !ok || sc.Operation != "x" || len(got) != 1 {
		t.Errorf("Get(alice, a) = %+v, %v, %v", sc, got, ok)
	}
	if _, _, ok := l.Get("bob", "a"); ok {
		t.Error("bob finds alice's call a")
	}
	if l.Keep("alice", "a", scope, nil) {
		t.Error("Keep replaced alice's call a")
	}
	l.Put("alice", "c", scope, nil) // forgets the oldest, a
	if _, _, ok := l.Get("alice", "a"); ok {
		t.Error("a is remembered beyond the bound")
	}
	for _, id := range []string{"b", "c"} {
		if _, _, ok := l.Get("alice", id); !ok {
			t.Errorf("%s forgotten", id)
		}
	}
	// A call remembered with its calibration map and score.
	want := reputation.Call{Scope: scope, Ballots: b, Tier: "safe", Score: 0.9375}
	l.PutCall("alice", "d", want)
	if got, ok := l.Call("alice", "d"); !ok || got.Tier != want.Tier || got.Score != want.Score || len(got.Ballots) != 1 {
		t.Errorf("Call(d) = %+v, %v; want %+v", got, ok, want)
	}
}

// TestLedgerReportsOnce: a call's report counts once, by its caller only;
// a report that says the opposite replaces the first, exactly while the
// records are not full, and moves a full record by the weight at most;
// concurrent reports of one call count once.
func TestLedgerReportsOnce(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{Horizon: 20})
	if err != nil {
		t.Fatal(err)
	}
	l := reputation.NewLedger(10)
	sc := reputation.Scope{}
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3}}
	l.Put("alice", "t", sc, ballots)
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	load := func() []reputation.Record {
		recs, err := store.Load(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if ok, err := l.Report(ctx, b, "bob", "t", false); ok || err != nil {
		t.Errorf("bob's report on alice's call: ok %v, %v; want not found", ok, err)
	}
	if diff := cmp.Diff([]reputation.Record{{}, {}, {}}, load()); diff != "" {
		t.Fatalf("bob's report moved the records (-want +got):\n%s", diff)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if ok, err := l.Report(ctx, b, "alice", "t", false); !ok || err != nil {
				t.Errorf("alice's report: ok %v, %v", ok, err)
			}
		})
	}
	wg.Wait()
	w := float64(reputation.DefaultFeedbackWeight)
	wrong := []reputation.Record{{Wrong: w}, {Wrong: w}, {}}
	if diff := cmp.Diff(wrong, load()); diff != "" {
		t.Errorf("eight reports of a wrong outcome (-once +got):\n%s", diff)
	}
	if _, err := l.Report(ctx, b, "alice", "t", true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]reputation.Record{{Right: w}, {Right: w}, {Wrong: w}}, load()); diff != "" {
		t.Errorf("a right outcome in place of a wrong one (-as if only right +got):\n%s", diff)
	}

	// A full record: the flip moves at most the weight, from one count to
	// the other, and forgets nothing else.
	if err := store.Add(ctx, 20, []reputation.Delta{{Key: keys[0], Delta: reputation.Record{Right: 30, Wrong: 30}}}); err != nil {
		t.Fatal(err)
	}
	full := load()[0]
	if _, err := l.Report(ctx, b, "alice", "t", false); err != nil {
		t.Fatal(err)
	}
	got := load()[0]
	if diff := cmp.Diff(reputation.Record{Right: full.Right - w, Wrong: full.Wrong + w}, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("a flip on a full record (-want +got):\n%s", diff)
	}
}

// TestLedger_reportUnderCallID: a call one Ledger remembers under its
// own id and another under a name of its own (Call.ID naming the first)
// counts its report once, and the opposite report on either replaces it.
func TestLedger_reportUnderCallID(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := reputation.Call{Scope: scope, Ballots: []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}}, At: time.Now()}
	first, rebuilt := reputation.NewLedger(1), reputation.NewLedger(1)
	first.PutCall("alice", "t", call)
	named := call
	named.ID = "t"
	rebuilt.PutCall("alice", "receipt:r", named)
	w := float64(reputation.DefaultFeedbackWeight)
	for i, r := range []struct {
		ledger *reputation.Ledger
		id     string
		right  bool
		want   reputation.Record
	}{
		{first, "t", false, reputation.Record{Wrong: w}},
		{rebuilt, "receipt:r", false, reputation.Record{Wrong: w}},
		{rebuilt, "receipt:r", true, reputation.Record{Right: w}},
		{first, "t", true, reputation.Record{Right: w}},
	} {
		if ok, err := r.ledger.Report(ctx, b, "alice", r.id, r.right); !ok || err != nil {
			t.Fatalf("report %d: ok %v, %v", i, ok, err)
		}
		if diff := cmp.Diff([]reputation.Record{r.want}, reputationtest.Load(t, store, reputation.Key{Session: 1})); diff != "" {
			t.Errorf("after report %d, %v by %q (-want +got):\n%s", i, r.right, r.id, diff)
		}
	}
}

// BenchmarkLedger_putManyCallers remembers calls in a full Ledger that
// 10,000 callers share, each call forgetting one.
func BenchmarkLedger_putManyCallers(b *testing.B) {
	const callers = 10_000
	l := reputation.NewLedger(callers)
	for i := range callers {
		l.Put(fmt.Sprint("c", i), "t", scope, nil)
	}
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprint("u", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Put(fmt.Sprint("c", i%callers), ids[i%len(ids)], scope, nil)
	}
}
