package reputation_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// answers returns the votes of sessions 1, 2, … answering as.
func answers(as ...string) []consensus.Vote {
	vs := make([]consensus.Vote, len(as))
	for i, a := range as {
		vs[i] = consensus.Vote{Session: int64(i + 1), Label: "OK", Answer: json.RawMessage(a)}
	}
	return vs
}

// coincidence returns b's coincidence in scope.
func coincidence(t *testing.T, b *reputation.Book, scope reputation.Scope) float64 {
	t.Helper()
	c, err := b.Coincidence(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBook_Coincidence checks one step of what a call teaches of how
// often wrong answers coincide: each hypothesis of which group is right
// (or none), weighed by its posterior, counts the coincidences of the
// answers it calls wrong.
func TestBook_Coincidence(t *testing.T) {
	ctx := context.Background()
	b := newBook(t, nil)
	scope := reputation.Scope{Operation: "delegate_v3", Kind: "math"}
	read := func() float64 { return coincidence(t, b, scope) }
	p := reputation.DefaultCoincidencePrior()
	if got, want := read(), p.Mean(); got != want {
		t.Fatalf("before any call: %v, want the prior's %v", got, want)
	}
	validation := []consensus.Vote{{Session: 1, Label: "VALID"}, {Session: 2, Label: "INVALID"}, {Session: 3, Label: "INVALID"}}
	lone := append(answers(`18`), consensus.Vote{Session: 2, Label: "FAILED"})
	for _, votes := range [][]consensus.Vote{validation, lone, answers(`18`, `18`), answers(`18`, `18`, `18.0`, `18`, `18`)} {
		if err := b.Learn(ctx, scope, votes, consensus.Policy{}, consensus.Reliabilities{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(); got != p.Mean() {
		t.Fatalf("calls that teach nothing moved it to %v", got)
	}

	// 18, 18, 18, 3, 3, 7 read at coincidence c and reliability r:
	// groups 3, 2, 1. Each hypothesis calls w answers in g groups wrong.
	const c, r = 0.25, 0.7
	groups := []int{3, 2, 1}
	var same, chances float64
	none := 1.0
	for i, k := range groups {
		post := consensus.PluralityPosteriorAt(groups, i, c, r)
		none -= post
		w, g := 6-k, 2
		if w >= 2 {
			same += post * float64(w-g)
			chances += post * float64(w-1)
		}
	}
	same, chances = same+none*3, chances+none*5
	rel := consensus.Reliabilities{Prior: r}
	if err := b.LearnAt(ctx, scope, answers(`18`, `18`, `18`, `3`, `3`, `7`), consensus.Policy{}, rel, c); err != nil {
		t.Fatal(err)
	}
	want := (same + p.Right) / (chances + p.Right + p.Wrong)
	if got := read(); math.Abs(got-want) > 1e-12 {
		t.Errorf("after 18, 18, 18, 3, 3, 7: %v, want %v", got, want)
	}

	// Learn reads the figure LearnAt is given: a second book that
	// learned the same call, then LearnAt at the figure it read, ends
	// where Learn leaves the first.
	other := newBook(t, nil)
	if err := other.LearnAt(ctx, scope, answers(`18`, `18`, `18`, `3`, `3`, `7`), consensus.Policy{}, rel, c); err != nil {
		t.Fatal(err)
	}
	split := answers(`18`, `18`, `3`)
	if err := other.LearnAt(ctx, scope, split, consensus.Policy{}, rel, read()); err != nil {
		t.Fatal(err)
	}
	if err := b.Learn(ctx, scope, split, consensus.Policy{}, rel); err != nil {
		t.Fatal(err)
	}
	theirs := coincidence(t, other, scope)
	if got := read(); got != theirs || got == want {
		t.Errorf("Learn then reads %v, LearnAt at the figure read %v (before both %v)", got, theirs, want)
	}
}

// TestBook_Coincidence_converges checks that calls of a panel whose
// wrong answers coincide at a known rate teach that rate, though no
// outcome says which answers were wrong; and that the calls where wrong
// answers agree (the ones a count of losing answers never sees) are
// counted.
func TestBook_Coincidence_converges(t *testing.T) {
	for _, truth := range []float64{0.05, 0.3} {
		t.Run(strconv.FormatFloat(truth, 'f', -1, 64), func(t *testing.T) {
			ctx := context.Background()
			b := newBook(t, nil)
			scope := reputation.Scope{Operation: "delegate_v3"}
			rng := rand.New(rand.NewPCG(1, uint64(100*truth)))
			for range 3000 {
				// A run is right with the question's chance p, drawn from
				// Beta(4, 1) (the model's prior at reliability 0.8); a wrong
				// answer after the first coincides with one before it with
				// probability truth, else it is new.
				p := math.Pow(rng.Float64(), 1.0/4)
				var wrong []string
				as := make([]string, 2+rng.IntN(4))
				for i := range as {
					switch {
					case rng.Float64() < p:
						as[i] = "42"
					case len(wrong) > 0 && rng.Float64() < truth:
						as[i] = wrong[rng.IntN(len(wrong))]
					default:
						as[i] = strconv.Itoa(len(wrong) + 100*i)
					}
					if as[i] != "42" {
						wrong = append(wrong, as[i])
					}
				}
				votes := answers(as...)
				ids := make([]int64, len(votes))
				for i, v := range votes {
					ids[i] = v.Session
				}
				rel, err := b.Reliabilities(ctx, scope, ids)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
					t.Fatal(err)
				}
			}
			got := coincidence(t, b, scope)
			t.Logf("learned %.3f", got)
			if math.Abs(got-truth) > 0.07 {
				t.Errorf("learned %.3f, want %.2f ± 0.07", got, truth)
			}
		})
	}
}
