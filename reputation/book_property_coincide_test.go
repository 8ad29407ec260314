package reputation_test

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Coincidence stays in [0, 1] and moves as the package doc's estimator
// says: over groups of equal answers, each hypothesis (group i right, or
// none) weighs its posterior at the figure before the call and the runs'
// mean reliability; under it the w answers called wrong, in g groups,
// took w-g coincidences in w-1 chances, added to Right and Wrong over
// Beta(1, 9). A call whose answers all agree, or of verdicts, teaches
// nothing. Learn of a call, with no LearnFromAgreement, never moves a
// reliability.
func TestBookProperty_Coincidence(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for trial := range 300 {
		b, _ := reputation.New(nil, reputation.Options{})
		sc := propertyScopes[r.IntN(len(propertyScopes))]
		R, W := 0.0, 0.0
		sessions := []int64{1, 2, 3, 4, 5, 6}
		// Give the sessions different reliabilities first.
		for range 10 {
			if err := b.Feedback(propertyCtx, sc, randomBallots(r, sessions), r.IntN(2) == 0); err != nil {
				t.Fatal(err)
			}
		}
		for range 20 {
			n := 2 + r.IntN(5)
			votes := make([]consensus.Vote, n)
			ans := make([]int, n)
			verdicts := r.IntN(8) == 0
			for i := range votes {
				ans[i] = r.IntN(1 + r.IntN(4))
				votes[i] = consensus.Vote{Session: sessions[r.IntN(len(sessions))], Label: "OK", Answer: json.RawMessage(strconv.Itoa(ans[i]))}
				if verdicts {
					votes[i] = consensus.Vote{Session: votes[i].Session, Label: []consensus.Label{consensus.LabelValid, consensus.LabelInvalid}[ans[i]%2]}
				}
			}
			ids := make([]int64, n)
			for i, v := range votes {
				ids[i] = v.Session
			}
			rel, err := b.Reliabilities(propertyCtx, sc, ids)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := b.Coincidence(propertyCtx, sc)
			if want := (R + 1) / (R + W + 10); !near(before, want, 1e-9) {
				t.Fatalf("trial %d: Coincidence %v, estimator %v", trial, before, want)
			}
			// Expected delta, from the doc.
			var groups []int
			index := map[int]int{}
			for _, a := range ans {
				if _, ok := index[a]; !ok {
					index[a] = len(groups)
					groups = append(groups, 0)
				}
				groups[index[a]]++
			}
			if !verdicts && len(groups) >= 2 {
				mean := 0.0
				for _, v := range votes {
					mean += rel.Of(v.Session)
				}
				mean /= float64(n)
				posts := consensus.PluralityPosteriorsAt(nil, groups, before, mean)
				none := 1.0
				add := func(p float64, w, g int) {
					if w >= 2 {
						R += p * float64(w-g)
						W += p * float64(g-1)
					}
				}
				for i, k := range groups {
					none -= posts[i]
					add(posts[i], n-k, len(groups)-1)
				}
				add(max(none, 0), n, len(groups))
			}
			if err := b.Learn(propertyCtx, sc, votes, consensus.Policy{}, rel); err != nil {
				t.Fatal(err)
			}
			after, _ := b.Coincidence(propertyCtx, sc)
			if !(after >= 0 && after <= 1) {
				t.Fatalf("Coincidence %v out of [0, 1]", after)
			}
			rel2, _ := b.Reliabilities(propertyCtx, sc, ids)
			for _, s := range ids {
				if rel2.Sessions[s] != rel.Sessions[s] {
					t.Fatalf("Learn moved session %d's reliability %v -> %v (no LearnFromAgreement)", s, rel.Sessions[s], rel2.Sessions[s])
				}
			}
			if want := (R + 1) / (R + W + 10); !near(after, want, 1e-9) {
				t.Fatalf("trial %d: after a call of groups %v (verdicts %v): Coincidence %v, estimator %v", trial, groups, verdicts, after, want)
			}
		}
	}
}
