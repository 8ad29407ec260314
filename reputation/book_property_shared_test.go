package reputation_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/reputation"
)

// A snapshot is read from one state of the store: writers that always
// move sessions 1 and 2 alike (one Feedback on both, backing the outcome)
// never show a snapshot in which the two differ, and each figure of a
// snapshot is what its own method reads once writers stop.
func TestBookProperty_SnapshotConsistent(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			st := newStore(t)
			b, _ := reputation.New(st, reputation.Options{Horizon: 50})
			sc := reputation.Scope{Operation: "a", Kind: "x"}
			writes := 300
			if name == "bolt" {
				writes = 60
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 21))
					for range writes {
						right := r.IntN(3) > 0
						bs := []reputation.Ballot{{Session: 1, Backed: true, Confidence: 0.7}, {Session: 2, Backed: true, Confidence: 0.7}, {Session: 3, Opposed: true}}
						if err := b.Feedback(propertyCtx, sc, bs, right); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			var readers sync.WaitGroup
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					snap, err := b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Sessions: []int64{1, 2, 3}, Leader: []int64{1, 2, 3}, Coincidence: true})
					if err != nil {
						t.Error(err)
						return
					}
					if snap.Reliabilities.Sessions[1] != snap.Reliabilities.Sessions[2] || snap.Evidence[1] != snap.Evidence[2] || snap.Records[0].Won != snap.Records[1].Won || snap.Records[0].Lost != snap.Records[1].Lost {
						t.Errorf("torn snapshot: %+v", snap)
						return
					}
					for s, ev := range snap.Evidence {
						if !near(ev.Right/(ev.Right+ev.Wrong), snap.Reliabilities.Sessions[s], 1e-12) {
							t.Errorf("session %d: evidence %+v, reliability %v", s, ev, snap.Reliabilities.Sessions[s])
						}
					}
				}
			})
			wg.Wait()
			close(stop)
			readers.Wait()
			snap, _ := b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Sessions: []int64{1, 2, 3}, Leader: []int64{1, 2, 3}, Coincidence: true, Tiers: []string{"t"}})
			rel, ev, _ := b.Evidence(propertyCtx, sc, []int64{1, 2, 3})
			l, ok, _ := b.Leader(propertyCtx, sc, []int64{1, 2, 3})
			c, _ := b.Coincidence(propertyCtx, sc)
			if fmt.Sprint(snap.Reliabilities) != fmt.Sprint(rel) || fmt.Sprint(snap.Evidence) != fmt.Sprint(ev) || snap.Lead != l || snap.Leads != ok || snap.Coincidence != c {
				t.Errorf("snapshot %+v differs from its methods: %+v %+v %+v %v %v", snap, rel, ev, l, ok, c)
			}
		})
	}
}

// Two Books, each with its Ledger, over one store (two servers sharing a
// database) converge to what one Book given every report reads: the
// reports split between them, a call reported on both servers (the same
// call rebuilt on each, as by receipt) counts once, and a report that
// says the opposite replaces the first.
func TestBookProperty_TwoServersConverge(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(23, 24))
			sessions := []int64{1, 2, 3, 4}
			shared := newStore(t)
			one := newStore(t)
			o := reputation.Options{Horizon: 1e9}
			b1, _ := reputation.New(shared, o)
			b2, _ := reputation.New(shared, o)
			bo, _ := reputation.New(one, o)
			l1, l2, lo := reputation.NewLedger(1000), reputation.NewLedger(1000), reputation.NewLedger(1000)
			calls := 60
			if name == "bolt" {
				calls = 15
			}
			final := map[string]bool{}
			callOf := map[string]reputation.Call{}
			for i := range calls {
				id := fmt.Sprint("call", i)
				c := reputation.Call{Scope: propertyScopes[r.IntN(len(propertyScopes))], Ballots: randomBallots(r, sessions)}
				callOf[id] = c
				l1.PutCall("caller", id, c)
				c2 := c
				c2.At = l1AtOf(t, l1, id)
				l2.PutCall("caller", id, c2)
				lo.PutCall("caller", id, c2)
			}
			var wg sync.WaitGroup
			for i := range calls {
				id := fmt.Sprint("call", i)
				reps := 1 + r.IntN(3)
				var seq []bool
				for range reps {
					seq = append(seq, r.IntN(2) == 0)
				}
				final[id] = seq[len(seq)-1]
				wg.Go(func() {
					if r2 := rand.New(rand.NewPCG(uint64(i), 25)); r2.IntN(2) == 0 {
						// Both servers take the same report at once.
						var both sync.WaitGroup
						for _, lb := range [2]struct {
							l *reputation.Ledger
							b *reputation.Book
						}{{l1, b1}, {l2, b2}} {
							both.Go(func() {
								if ok, err := lb.l.Report(propertyCtx, lb.b, "caller", id, seq[0]); err != nil || !ok {
									t.Errorf("Report: %v %v", ok, err)
								}
							})
						}
						both.Wait()
					}
					for k, right := range seq {
						l, b := l1, b1
						if k%2 == 1 {
							l, b = l2, b2
						}
						if ok, err := l.Report(propertyCtx, b, "caller", id, right); err != nil || !ok {
							t.Errorf("Report: %v %v", ok, err)
						}
					}
				})
			}
			wg.Wait()
			for i := range calls {
				id := fmt.Sprint("call", i)
				if ok, err := lo.Report(propertyCtx, bo, "caller", id, final[id]); err != nil || !ok {
					t.Fatalf("Report: %v %v", ok, err)
				}
			}
			for _, sc := range propertyScopes {
				got, _, _ := b1.Evidence(propertyCtx, sc, sessions)
				want, _, _ := bo.Evidence(propertyCtx, sc, sessions)
				for _, s := range sessions {
					if !near(got.Sessions[s], want.Sessions[s], 1e-9) {
						t.Fatalf("scope %+v session %d: two servers read %v, one Book %v", sc, s, got.Sessions[s], want.Sessions[s])
					}
				}
				s1, _ := b1.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Leader: sessions})
				so, _ := bo.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Leader: sessions})
				if fmt.Sprint(s1.Records) != fmt.Sprint(so.Records) {
					t.Fatalf("scope %+v: lead records %v, one Book %v", sc, s1.Records, so.Records)
				}
			}
		})
	}
}

func l1AtOf(t *testing.T, l *reputation.Ledger, id string) time.Time {
	t.Helper()
	c, ok := l.Call("caller", id)
	if !ok {
		t.Fatal("call not remembered")
	}
	return c.At
}

// Each figure of a Snapshot is the one its own method returns, for random
// requests after random reports (with calibration maps).
func TestBookProperty_SnapshotMatchesMethods(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	sessions := []int64{1, 2, 3, 4, 5}
	for range 100 {
		b, _ := reputation.New(nil, reputation.Options{Horizon: 40})
		l := reputation.NewLedger(100)
		for i := range r.IntN(40) {
			id := fmt.Sprint(i)
			l.PutCall("c", id, reputation.Call{Scope: propertyScopes[r.IntN(len(propertyScopes))], Ballots: randomBallots(r, sessions), Tier: []string{"t", "u"}[r.IntN(2)], Score: r.Float64(), Conservative: r.Float64()})
			if _, err := l.Report(propertyCtx, b, "c", id, r.IntN(3) > 0); err != nil {
				t.Fatal(err)
			}
		}
		for _, sc := range propertyScopes {
			pick := func() []int64 {
				var out []int64
				for _, j := range r.Perm(len(sessions))[:r.IntN(len(sessions)+1)] {
					out = append(out, sessions[j])
				}
				return out
			}
			req := reputation.SnapshotRequest{Sessions: pick(), Leader: pick(), Tiers: []string{"t", "u", "v"}[:r.IntN(4)], Coincidence: r.IntN(2) == 0}
			snap, err := b.Snapshot(propertyCtx, sc, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(req.Sessions) > 0 {
				rel, ev, _ := b.Evidence(propertyCtx, sc, req.Sessions)
				if fmt.Sprint(rel) != fmt.Sprint(snap.Reliabilities) || fmt.Sprint(ev) != fmt.Sprint(snap.Evidence) {
					t.Fatalf("Evidence differs: %+v %+v vs %+v %+v", rel, ev, snap.Reliabilities, snap.Evidence)
				}
			}
			if len(req.Leader) > 0 {
				ld, ok, _ := b.Leader(propertyCtx, sc, req.Leader)
				if ld != snap.Lead || ok != snap.Leads {
					t.Fatalf("Leader differs: %+v %v vs %+v %v", ld, ok, snap.Lead, snap.Leads)
				}
			}
			if len(req.Tiers) > 0 {
				cs, _ := b.Calibrations(propertyCtx, sc, req.Tiers...)
				if len(cs) != len(snap.Calibrations) {
					t.Fatalf("Calibrations differ in number")
				}
				for i := range cs {
					if *cs[i] != *snap.Calibrations[i] {
						t.Fatalf("Calibration %d differs: %+v vs %+v", i, *cs[i], *snap.Calibrations[i])
					}
				}
			}
			if req.Coincidence {
				c, _ := b.Coincidence(propertyCtx, sc)
				if c != snap.Coincidence {
					t.Fatalf("Coincidence differs")
				}
			}
		}
	}
}
