package reputation_test

import (
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// randomOptions returns options that fill records quickly (a small
// horizon) as often as not.
func randomOptions(r *rand.Rand) reputation.Options {
	o := reputation.Options{}
	switch r.IntN(3) {
	case 0:
		o.Horizon = 4 + float64(r.IntN(60))
	case 1:
		o.Horizon = 1e6
	}
	if r.IntN(2) == 0 {
		o.FeedbackWeight = 0.5 + 8*r.Float64()
	}
	if r.IntN(2) == 0 {
		o.Prior = reputation.Prior{Right: 0.5 + 60*r.Float64(), Wrong: 0.5 + 60*r.Float64()}
	}
	return o
}

// feedRandom makes n random Feedback reports through b.
func feedRandom(t *testing.T, b *reputation.Book, r *rand.Rand, sessions []int64, n int) {
	t.Helper()
	for range n {
		sc := propertyScopes[r.IntN(len(propertyScopes))]
		if err := b.Feedback(propertyCtx, sc, randomBallots(r, sessions), r.IntN(3) > 0); err != nil {
			t.Fatal(err)
		}
	}
}

// While the records are within their horizon, a right outcome reported
// for a session never lowers its reliability in the scope reported, and a
// wrong one never raises it, through every store. (A full wider record can
// move it slightly the other way: the Book doc says how far.)
func TestBookProperty_FeedbackMonotone(t *testing.T) {
	unfilled := true
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			trials := 400
			if name == "bolt" {
				trials = 25
			}
			sessions := []int64{1, 2, 3, 4}
			for trial := range trials {
				o := randomOptions(r)
				if unfilled {
					o.Horizon = 1e9
				}
				st := newStore(t)
				b, err := reputation.New(st, o)
				if err != nil {
					t.Fatal(err)
				}
				feedRandom(t, b, r, sessions, r.IntN(40))
				for range 10 {
					sc := propertyScopes[r.IntN(len(propertyScopes))]
					s := sessions[r.IntN(len(sessions))]
					right := r.IntN(2) == 0
					before := relOf(t, b, sc, s)
					lv := levelKeys(sc, s)
					recBefore := loadAll(t, st, lv)
					if err := b.Feedback(propertyCtx, sc, []reputation.Ballot{{Session: s, Backed: true}}, right); err != nil {
						t.Fatal(err)
					}
					after := relOf(t, b, sc, s)
					if right && after < before-1e-12 || !right && after > before+1e-12 {
						t.Fatalf("trial %d (%+v): a %v outcome for session %d in %+v moved its reliability %v -> %v\nrecords before %v\nafter %v", trial, o, right, s, sc, before, after, recBefore, loadAll(t, st, lv))
					}
				}
			}
		})
	}
}

// levelKeys returns the keys of session's records at each level of sc,
// widest first.
func levelKeys(sc reputation.Scope, s int64) []reputation.Key {
	keys := []reputation.Key{{Session: s}}
	if sc.Operation != "" {
		keys = append(keys, reputation.Key{Session: s, Operation: sc.Operation})
		if sc.Kind != "" {
			keys = append(keys, reputation.Key{Session: s, Operation: sc.Operation, Kind: sc.Kind})
		}
	}
	return keys
}
