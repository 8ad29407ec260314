package reputation_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Every method at once on one Book and a second over the same store: no
// race (run with -race), no error, figures in range.
func TestBookProperty_ConcurrentMix(t *testing.T) {
	st := new(reputation.Memory)
	b1, _ := reputation.New(st, reputation.Options{Horizon: 40})
	b2, _ := reputation.New(st, reputation.Options{Horizon: 40, LearnFromAgreement: true})
	l := reputation.NewLedger(50)
	sessions := []int64{1, 2, 3, 4}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 33))
			for i := range 300 {
				b := []*reputation.Book{b1, b2}[r.IntN(2)]
				sc := propertyScopes[r.IntN(len(propertyScopes))]
				var err error
				switch r.IntN(7) {
				case 0:
					err = b.Feedback(propertyCtx, sc, randomBallots(r, sessions), r.IntN(2) == 0)
				case 1:
					votes := make([]consensus.Vote, 2+r.IntN(3))
					ids := make([]int64, len(votes))
					for j := range votes {
						votes[j] = consensus.Vote{Session: sessions[r.IntN(4)], Label: "OK", Answer: json.RawMessage(fmt.Sprint(r.IntN(3))), Confidence: r.Float64()}
						ids[j] = votes[j].Session
					}
					rel, e := b.Reliabilities(propertyCtx, sc, ids)
					if e != nil {
						err = e
						break
					}
					err = b.Learn(propertyCtx, sc, votes, consensus.Policy{}, rel)
				case 2:
					var snap reputation.Snapshot
					snap, err = b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Sessions: sessions, Leader: sessions, Tiers: []string{"t"}, Coincidence: true})
					for _, p := range snap.Reliabilities.Sessions {
						if !(p > 0 && p < 1) {
							t.Errorf("reliability %v", p)
						}
					}
					if !(snap.Coincidence > 0 && snap.Coincidence < 1) || !(snap.Reliabilities.Correlation >= 0 && snap.Reliabilities.Correlation <= reputation.MaxCorrelation) {
						t.Errorf("snapshot out of range: %+v", snap)
					}
				case 3:
					err = b.Forget(propertyCtx, sc, sessions[r.IntN(4)])
				case 4:
					_, err = b.Identify(propertyCtx, sessions[r.IntN(4)], fmt.Sprint("w", r.IntN(2)))
				case 5:
					id := fmt.Sprint(g, "/", i)
					l.PutCall("c", id, reputation.Call{Scope: sc, Ballots: randomBallots(r, sessions), Tier: "t", Score: r.Float64(), Conservative: r.Float64()})
					_, err = l.Report(propertyCtx, b, "c", id, r.IntN(2) == 0)
				case 6:
					_, _, err = b.Leader(propertyCtx, sc, sessions)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
