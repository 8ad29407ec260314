package consensus_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

func TestPosterior_properties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	check := func(a, d int) {
		p := consensus.Posterior(a, d)
		if !(p >= 0 && p <= 1) {
			t.Fatalf("Posterior(%d,%d)=%v out of [0,1]", a, d, p)
		}
		if q := consensus.Posterior(d, a); a != d && math.Abs(p+q-1) > 1e-9 {
			t.Errorf("Posterior(%d,%d)+Posterior(%d,%d) = %v, want 1", a, d, d, a, p+q)
		}
		if up := consensus.Posterior(a+1, d); up < p {
			t.Errorf("one more agreeing vote lowers Posterior: (%d,%d)=%v -> (%d,%d)=%v", a, d, p, a+1, d, up)
		}
		if dn := consensus.Posterior(a, d+1); dn > p {
			t.Errorf("one more against vote raises Posterior: (%d,%d)=%v -> (%d,%d)=%v", a, d, p, a, d+1, dn)
		}
	}
	for a := 0; a < 80; a++ {
		for d := 0; d < 80; d++ {
			check(a, d)
		}
	}
	for range 20000 {
		a := r.IntN(1 << uint(r.IntN(34)))
		d := r.IntN(1 << uint(r.IntN(34)))
		check(a, d)
	}
	for _, a := range []int{0, 1, math.MaxInt / 2, math.MaxInt - 1} {
		for _, d := range []int{0, 1, -5, math.MaxInt / 2} {
			p := consensus.Posterior(a, d)
			if !(p >= 0 && p <= 1) {
				t.Errorf("Posterior(%d,%d)=%v", a, d, p)
			}
		}
	}
}

func TestCredence_properties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 9))
	for range 20000 {
		g := 1 + r.IntN(5)
		scores := make([]float64, g)
		for i := range scores {
			scores[i] = r.Float64() * 10
		}
		tp := r.Float64()
		sum := 0.0
		for i := range scores {
			c := consensus.Credence(scores, i, tp)
			if !(c >= 0 && c <= 1) {
				t.Fatalf("Credence %v", c)
			}
			sum += c
			up := append([]float64(nil), scores...)
			up[i] += r.Float64()
			if c2 := consensus.Credence(up, i, tp); c2 < c-1e-15 {
				t.Fatalf("raising S_%d lowers its credence: %v -> %v (%v -> %v)", i, c, c2, scores, up)
			}
		}
		if sum > 1+1e-12 {
			t.Fatalf("credences sum to %v", sum)
		}
	}
}

func randVotes(r *rand.Rand, n int) ([]consensus.Vote, consensus.Reliabilities) {
	labels := []consensus.Label{consensus.LabelValid, consensus.LabelInvalid}
	votes := make([]consensus.Vote, n)
	rel := consensus.Reliabilities{Sessions: map[int64]float64{}}
	for i := range votes {
		votes[i] = consensus.Vote{Session: int64(i + 1), Label: labels[r.IntN(2)]}
		rel.Sessions[int64(i+1)] = 0.5 + r.Float64()/2
	}
	return votes, rel
}

// Permuting the votes changes no figure but Winner's index when there
// is no tie of scores.
func TestWeighted_orderOfVotes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		n := 1 + r.IntN(6)
		votes, rel := randVotes(r, n)
		rel.Correlation = r.Float64() * 0.9
		a, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		perm := r.Perm(n)
		pv := make([]consensus.Vote, n)
		for i, j := range perm {
			pv[i] = votes[j]
		}
		b, err := consensus.Weighted{Reliabilities: rel}.Aggregate(pv, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Label != b.Label || math.Abs(a.Confidence-b.Confidence) > 1e-12 || a.Agreeing != b.Agreeing {
			t.Fatalf("permutation changed outcome: %s %v %d vs %s %v %d", a.Label, a.Confidence, a.Agreeing, b.Label, b.Confidence, b.Agreeing)
		}
	}
}

// One more agreeing vote, independent voters (ρ=0), never lowers the
// confidence; raising a winning voter's reliability never lowers it.
func TestWeighted_monotone(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		n := 1 + r.IntN(5)
		votes, rel := randVotes(r, n)
		out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		more := append(append([]consensus.Vote(nil), votes...), consensus.Vote{Session: int64(n + 1), Label: out.Label})
		rel2 := consensus.Reliabilities{Sessions: map[int64]float64{}}
		for k, v := range rel.Sessions {
			rel2.Sessions[k] = v
		}
		rel2.Sessions[int64(n+1)] = 0.5 + r.Float64()/2
		out2, err := consensus.Weighted{Reliabilities: rel2}.Aggregate(more, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if out2.Label == out.Label && out2.Confidence < out.Confidence-1e-15 {
			t.Fatalf("one more agreeing vote lowered the confidence %v -> %v", out.Confidence, out2.Confidence)
		}
		// raise a winning voter's reliability
		rel3 := consensus.Reliabilities{Sessions: map[int64]float64{}}
		for k, v := range rel.Sessions {
			rel3.Sessions[k] = v
		}
		w := votes[out.Winner].Session
		rel3.Sessions[w] = rel3.Sessions[w] + (1-rel3.Sessions[w])*r.Float64()
		out3, _ := consensus.Weighted{Reliabilities: rel3}.Aggregate(votes, consensus.Policy{})
		if out3.Label == out.Label && out3.Confidence < out.Confidence-1e-15 {
			t.Fatalf("raising the winner's reliability lowered the confidence %v -> %v", out.Confidence, out3.Confidence)
		}
	}
}

// Bad reliabilities are refused.
func TestWeighted_refusesBadReliabilities(t *testing.T) {
	votes := []consensus.Vote{{Session: 1, Label: "VALID"}}
	for _, rel := range []consensus.Reliabilities{
		{Sessions: map[int64]float64{1: math.NaN()}},
		{Sessions: map[int64]float64{1: -0.1}},
		{Sessions: map[int64]float64{1: 1.1}},
		{Prior: math.NaN()},
		{Prior: math.Inf(1)},
		{Correlation: 1},
		{Correlation: math.NaN()},
		{Correlation: -0.1},
		{Confidence: map[int64]consensus.ConfidenceSlope{1: {Slope: math.Inf(1)}}},
		{Confidence: map[int64]consensus.ConfidenceSlope{1: {Slope: math.NaN()}}},
		{Confidence: map[int64]consensus.ConfidenceSlope{1: {Slope: 1, Center: math.Inf(-1)}}},
	} {
		if _, err := (consensus.Weighted{Reliabilities: rel}).Aggregate(votes, consensus.Policy{}); err == nil {
			t.Errorf("accepted %+v", rel)
		}
	}
	// Vote confidence NaN / Inf / >1: documented range [0,1].
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.9}, Confidence: map[int64]consensus.ConfidenceSlope{1: {Slope: 1}}}
	for _, c := range []float64{math.NaN(), math.Inf(1), 2, -1} {
		out, err := consensus.Weighted{Reliabilities: rel}.Aggregate([]consensus.Vote{{Session: 1, Label: "VALID", Confidence: c}}, consensus.Policy{})
		t.Logf("vote confidence %v: out.Confidence %v weights %v err %v", c, out.Confidence, out.Weights, err)
		if !(out.Confidence >= 0 && out.Confidence <= 1) && err == nil {
			t.Errorf("vote confidence %v: out.Confidence %v", c, out.Confidence)
		}
	}
}

// Symmetry: swapping VALID and INVALID swaps the outcome when there's no tie.
func TestWeighted_verdictSymmetry(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	swap := func(l consensus.Label) consensus.Label {
		switch l {
		case consensus.LabelValid:
			return consensus.LabelInvalid
		case consensus.LabelInvalid:
			return consensus.LabelValid
		}
		return l
	}
	for range 5000 {
		n := 1 + r.IntN(6)
		votes, rel := randVotes(r, n)
		sv := make([]consensus.Vote, n)
		for i, v := range votes {
			v.Label = swap(v.Label)
			sv[i] = v
		}
		for _, agg := range []consensus.Aggregator{consensus.Majority{}, consensus.Weighted{Reliabilities: rel}} {
			a, _ := agg.Aggregate(votes, consensus.Policy{})
			b, _ := agg.Aggregate(sv, consensus.Policy{})
			tie := a.Agreeing == a.Against
			if _, ok := agg.(consensus.Weighted); ok {
				tie = len(a.Weights) > 0 && math.Abs(2*a.Score-sum(a.Weights)) < 1e-12
			}
			if !tie && (swap(a.Label) != b.Label || a.Confidence != b.Confidence) {
				t.Fatalf("%T: %s %v vs swapped %s %v", agg, a.Label, a.Confidence, b.Label, b.Confidence)
			}
		}
	}
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestPluralityPosterior_properties(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for range 20000 {
		g := 1 + r.IntN(6)
		groups := make([]int, g)
		for i := range groups {
			groups[i] = 1 + r.IntN(5)
		}
		c := r.Float64() * 0.3 // realistic domain; outside it (r<0.5 or c large) the model is not monotone by design
		rel := 0.5 + r.Float64()/2
		ps := consensus.PluralityPosteriorsAt(nil, groups, c, rel)
		s := 0.0
		for i, p := range ps {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("posterior %v", p)
			}
			s += p
			if q := consensus.PluralityPosteriorAt(groups, i, c, rel); q != p {
				t.Fatalf("PluralityPosteriorsAt[%d]=%v != PluralityPosteriorAt=%v", i, p, q)
			}
			// permutation invariance
			perm := r.Perm(g)
			pg := make([]int, g)
			wi := 0
			for k, j := range perm {
				pg[k] = groups[j]
				if j == i {
					wi = k
				}
			}
			if q := consensus.PluralityPosteriorAt(pg, wi, c, rel); math.Abs(q-p) > 1e-12 {
				t.Fatalf("permutation changed posterior %v vs %v", p, q)
			}
			// monotone: one more answer for group i
			up := append([]int(nil), groups...)
			up[i]++
			if tot := func() int {
				s := 0
				for _, k := range up {
					s += k
				}
				return s
			}(); tot > 5 {
				continue
			}
			if q := consensus.PluralityPosteriorAt(up, i, c, rel); q < p-1e-12 {
				t.Errorf("one more agreeing answer lowered posterior: %v@%d %v -> %v (c=%v r=%v)", groups, i, p, q, c, rel)
			}
		}
		if s > 1+1e-9 {
			t.Fatalf("sum %v", s)
		}
	}
	// extreme inputs
	for _, c := range []float64{0, 1, math.NaN(), -1, 2, math.Inf(1)} {
		for _, rel := range []float64{0, 1, 0.5, math.NaN(), math.Inf(-1), -3} {
			for _, groups := range [][]int{{1}, {2}, {2, 1}, {1, 1}, {3, 1, 1}, {1 << 40}, {1 << 40, 1}, {math.MaxInt / 2, math.MaxInt / 2}} {
				for i := range groups {
					p := consensus.PluralityPosteriorAt(groups, i, c, rel)
					q := consensus.PluralityPosterior(groups, i, c)
					if !(p >= 0 && p <= 1) || !(q >= 0 && q <= 1) {
						t.Errorf("groups %v c=%v r=%v: At %v, uniform %v", groups, c, rel, p, q)
					}
				}
			}
		}
	}
}
