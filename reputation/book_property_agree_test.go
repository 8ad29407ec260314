package reputation_test

import (
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// With LearnFromAgreement, one call in which a session's vote was right
// with probability p (consensus.Beliefs) reads (4+p)/(5+1) under the
// default Prior, in any scope (Book doc, Reading).
func TestBookProperty_AgreementOneCall(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for range 500 {
		b, _ := reputation.New(nil, reputation.Options{LearnFromAgreement: true})
		sc := propertyScopes[r.IntN(len(propertyScopes))]
		n := 2 + r.IntN(4)
		votes := make([]consensus.Vote, n)
		ids := make([]int64, n)
		for i := range votes {
			ids[i] = int64(i + 1)
			votes[i] = consensus.Vote{Session: ids[i], Label: []consensus.Label{consensus.LabelValid, consensus.LabelInvalid}[r.IntN(2)]}
		}
		rel, _ := b.Reliabilities(propertyCtx, sc, ids)
		beliefs, _, err := consensus.Beliefs(votes, consensus.Policy{}, rel)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Learn(propertyCtx, sc, votes, consensus.Policy{}, rel); err != nil {
			t.Fatal(err)
		}
		for _, sc2 := range propertyScopes {
			got, _ := b.Reliabilities(propertyCtx, sc2, ids)
			for i, s := range ids {
				want := (4 + beliefs[i]) / 6
				if !near(got.Sessions[s], want, 1e-12) {
					t.Fatalf("scope %+v (call in %+v) session %d: %v, doc %v", sc2, sc, s, got.Sessions[s], want)
				}
			}
		}
	}
}
