package reputation_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// A full Ledger forgets the oldest call of the caller that holds the
// most, counting the call it remembers to its caller, who loses a tie
// once it holds calls of its own; a caller holding none is owed room for
// one; a call replaced keeps its age; an id names a call only with its
// caller. Checked against a model of that doc.
func TestBookProperty_LedgerEviction(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for trial := range 300 {
		max := 1 + r.IntN(6)
		l := reputation.NewLedger(max)
		held := map[string][]string{} // caller -> ids, oldest first
		total := func() int {
			n := 0
			for _, ids := range held {
				n += len(ids)
			}
			return n
		}
		for step := range 60 {
			c := fmt.Sprint("c", r.IntN(4))
			id := fmt.Sprint("id", r.IntN(8))
			sc := reputation.Scope{Operation: fmt.Sprint("op", step)}
			if slices.Contains(held[c], id) {
				l.Put(c, id, sc, nil) // replaced, keeps its age
				if got, _, ok := l.Get(c, id); !ok || got != sc {
					t.Fatalf("trial %d: replaced call reads %+v %v", trial, got, ok)
				}
				continue
			}
			var candidates []string // callers one of whose oldest may go
			if total() >= max {
				counts := map[string]int{}
				for k, ids := range held {
					counts[k] = len(ids)
				}
				counts[c]++
				top := 0
				for _, n := range counts {
					top = maxInt(top, n)
				}
				if counts[c] == top && len(held[c]) > 0 {
					candidates = []string{c}
				} else {
					for k, n := range counts {
						if k != c && n == top {
							candidates = append(candidates, k)
						}
					}
				}
			}
			l.Put(c, id, sc, nil)
			held[c] = append(held[c], id)
			if len(candidates) > 0 {
				gone := ""
				for _, k := range candidates {
					if _, _, ok := l.Get(k, held[k][0]); !ok {
						if gone != "" {
							t.Fatalf("trial %d step %d: two calls forgotten", trial, step)
						}
						gone = k
					}
				}
				if gone == "" {
					t.Fatalf("trial %d step %d (max %d, held %v, put %s/%s): none of the oldest calls of %v forgotten", trial, step, max, held, c, id, candidates)
				}
				held[gone] = held[gone][1:]
			}
			for k, ids := range held {
				for _, x := range ids {
					if _, _, ok := l.Get(k, x); !ok {
						t.Fatalf("trial %d step %d (max %d): call %s/%s forgotten, model holds %v", trial, step, max, k, x, held)
					}
				}
			}
		}
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// A report that says the opposite of the first replaces it: with records
// that never fill, every figure (reliabilities, slopes, lead records,
// calibration maps) reads as if only the last report had been made, and
// a repeated report adds nothing.
func TestBookProperty_ReportReplaces(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(29, 30))
			sessions := []int64{1, 2, 3, 4}
			o := reputation.Options{Horizon: 1e9}
			trials := 40
			if name == "bolt" {
				trials = 5
			}
			for range trials {
				b, _ := reputation.New(newStore(t), o)
				bo, _ := reputation.New(newStore(t), o)
				l, lo := reputation.NewLedger(100), reputation.NewLedger(100)
				n := 1 + r.IntN(12)
				for i := range n {
					id := fmt.Sprint(i)
					c := reputation.Call{Scope: propertyScopes[r.IntN(len(propertyScopes))], Ballots: randomBallots(r, sessions), Tier: []string{"", "t"}[r.IntN(2)], Score: r.Float64(), Conservative: r.Float64()}
					l.PutCall("k", id, c)
					c, _ = l.Call("k", id)
					lo.PutCall("k", id, c)
					var last bool
					for range 1 + r.IntN(4) {
						last = r.IntN(2) == 0
						if _, err := l.Report(propertyCtx, b, "k", id, last); err != nil {
							t.Fatal(err)
						}
					}
					if _, err := lo.Report(propertyCtx, bo, "k", id, last); err != nil {
						t.Fatal(err)
					}
				}
				for _, sc := range propertyScopes {
					got, gev, _ := b.Evidence(propertyCtx, sc, sessions)
					want, wev, _ := bo.Evidence(propertyCtx, sc, sessions)
					for _, s := range sessions {
						if !near(got.Sessions[s], want.Sessions[s], 1e-9) || !near(gev[s].Right, wev[s].Right, 1e-9) || !near(gev[s].Wrong, wev[s].Wrong, 1e-9) {
							t.Fatalf("%+v session %d: %v, only the last report %v", sc, s, got.Sessions[s], want.Sessions[s])
						}
						gs, ws := got.Confidence[s], want.Confidence[s]
						if !near(gs.Slope, ws.Slope, 1e-6) || !near(gs.Center, ws.Center, 1e-6) {
							t.Fatalf("%+v session %d: slope %+v, only the last report %+v", sc, s, gs, ws)
						}
					}
					gsn, _ := b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Leader: sessions, Tiers: []string{"t"}})
					wsn, _ := bo.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Leader: sessions, Tiers: []string{"t"}})
					if fmt.Sprint(gsn.Records) != fmt.Sprint(wsn.Records) {
						t.Fatalf("%+v: lead records %v, only the last report %v", sc, gsn.Records, wsn.Records)
					}
					gm, wm := gsn.Calibrations[0], wsn.Calibrations[0]
					for i := range gm.Outcomes {
						for _, pair := range [][2]reputation.Record{{gm.Outcomes[i], wm.Outcomes[i]}, {gm.Scores[i], wm.Scores[i]}, {gm.Conservative[i], wm.Conservative[i]}} {
							if !near(pair[0].Right, pair[1].Right, 1e-9) || !near(pair[0].Wrong, pair[1].Wrong, 1e-9) {
								t.Fatalf("%+v bin %d: calibration %+v, only the last report %+v", sc, i, pair[0], pair[1])
							}
						}
					}
				}
			}
		})
	}
}
