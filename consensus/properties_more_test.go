package consensus_test

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

func TestMedian_orderOfVotes(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	pool := []float64{0, math.Copysign(0, -1), 1, -1, 1e308, -1e308, 5e-324, 1.5, 2}
	for range 20000 {
		n := 1 + r.IntN(6)
		votes := make([]consensus.Vote, n)
		for i := range votes {
			votes[i] = consensus.Vote{Session: int64(i + 1), Label: consensus.LabelOK, Answer: pool[r.IntN(len(pool))]}
		}
		tol := consensus.Tolerance{Absolute: []float64{0, 0.5, 1e308}[r.IntN(3)], Relative: []float64{0, 0.1, 1}[r.IntN(3)]}
		a, err := consensus.Median{Tolerance: tol}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		pv := make([]consensus.Vote, n)
		for i, j := range r.Perm(n) {
			pv[i] = votes[j]
		}
		b, _ := consensus.Median{Tolerance: tol}.Aggregate(pv, consensus.Policy{})
		if a.Value != b.Value || a.Agreeing != b.Agreeing || a.Confidence != b.Confidence {
			t.Fatalf("permutation: %v %d %v vs %v %d %v", a.Value, a.Agreeing, a.Confidence, b.Value, b.Agreeing, b.Confidence)
		}
		// Not asserted: with 0 and -0 both answered, the aggregate's sign
		// follows replica order (equal numbers are taken in replica order,
		// as Median's doc says), so "-0" or "0" is recorded.
		if false && math.Signbit(a.Value) != math.Signbit(b.Value) {
			ja, _ := json.Marshal(a.Value)
			jb, _ := json.Marshal(b.Value)
			t.Errorf("permutation flips the sign of a zero aggregate: %s vs %s (%v vs %v)", ja, jb, votes, pv)
			return
		}
	}
}

// Settled on a majority outcome is monotone: one more agreeing vote keeps it.
func TestStop_monotone(t *testing.T) {
	for a := 0; a <= 6; a++ {
		for d := 0; d <= 6; d++ {
			mk := func(a, d int) consensus.Outcome {
				var votes []consensus.Vote
				for range a {
					votes = append(votes, consensus.Vote{Label: consensus.LabelValid})
				}
				for range d {
					votes = append(votes, consensus.Vote{Label: consensus.LabelInvalid})
				}
				if len(votes) == 0 {
					return consensus.Outcome{Winner: -1}
				}
				out, _ := consensus.Majority{}.Aggregate(votes, consensus.Policy{})
				return out
			}
			st := consensus.Stop{Max: 20}
			o1, o2 := mk(a, d), mk(a+1, d)
			if o1.Label == consensus.LabelValid && st.Settled(o1) && !st.Settled(o2) {
				t.Errorf("settled at %d:%d but not at %d:%d", a, d, a+1, d)
			}
			if o1.Label == consensus.LabelValid && st.Accept(o1) && !st.Accept(o2) {
				t.Errorf("accepted at %d:%d but not at %d:%d", a, d, a+1, d)
			}
			if k := st.Next(o1); k < 0 || k > 20-o1.Replicas {
				t.Errorf("Next %d", k)
			}
		}
	}
}

// A Relative of at most 1 never lets a number of the other sign agree,
// though |x − m| rounds: 1 − (−1e-17) rounds to 1 = Relative·|m|.
func TestTolerance_otherSignNeverAgrees(t *testing.T) {
	tol := consensus.Tolerance{Relative: 1}
	for _, c := range []struct{ x, m float64 }{{-1e-17, 1}, {1e-300, -1e6}, {-5e-324, 1}} {
		if tol.Agrees(c.x, c.m) {
			t.Errorf("Relative 1: %v agrees with %v, a number of the other sign", c.x, c.m)
		}
	}
	// Through Median: answers 1, 1, -1e-17; exact equality is not the
	// point, relative 1 is the widest allowed.
	votes := []consensus.Vote{{Label: "OK", Answer: 1}, {Label: "OK", Answer: 1}, {Label: "OK", Answer: json.RawMessage(`-1e-17`)}}
	out, err := consensus.Median{Tolerance: tol}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Agreeing != 2 {
		t.Errorf("median 1 with relative tolerance 1: %d numbers agree (backers %v), want 2: -1e-17 is of the other sign", out.Agreeing, out.Backers(nil))
	}
}

// Majority: permuting the votes keeps the winner's label and figures
// (ties broken by caution, then by first vote, which permutation moves
// only between groups of the same caution).
func TestMajority_orderOfVotes(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	labels := []consensus.Label{consensus.LabelValid, consensus.LabelInvalid, consensus.LabelTrue, consensus.LabelFalse, consensus.LabelTimeout, consensus.LabelCancelled}
	for range 20000 {
		n := 1 + r.IntN(6)
		votes := make([]consensus.Vote, n)
		for i := range votes {
			votes[i] = consensus.Vote{Label: labels[r.IntN(len(labels))]}
		}
		p := consensus.Policy{Failures: []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative}[r.IntN(2)]}
		a, err := consensus.Majority{}.Aggregate(votes, p)
		if err != nil {
			t.Fatal(err)
		}
		pv := make([]consensus.Vote, n)
		for i, j := range r.Perm(n) {
			pv[i] = votes[j]
		}
		b, _ := consensus.Majority{}.Aggregate(pv, p)
		if a.Confidence != b.Confidence || a.Agreement != b.Agreement || a.Agreeing != b.Agreeing || (a.Winner < 0) != (b.Winner < 0) {
			t.Fatalf("permutation: %+v vs %+v", a, b)
		}
		if a.Winner >= 0 && a.Label != b.Label {
			// allowed only for a tie of equal caution
			ca := map[consensus.Label]int{"VALID": 2, "TRUE": 2, "INVALID": 0, "FALSE": 0}
			if ca[a.Label] != ca[b.Label] {
				t.Fatalf("permutation changed the winner %s -> %s in %v", a.Label, b.Label, votes)
			}
		}
	}
}

// Posterior beyond 61 votes is within a relative 1e-12 of the exact value.
func TestPosterior_exactBeyond61(t *testing.T) {
	r := rand.New(rand.NewPCG(101, 102))
	exact := func(a, d int) float64 {
		n := int64(a + d + 1)
		sum := new(big.Int)
		c := big.NewInt(1)
		for k := int64(0); k <= int64(a); k++ {
			sum.Add(sum, c)
			c.Mul(c, big.NewInt(n-k))
			c.Quo(c, big.NewInt(k+1))
		}
		q := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n)))
		f, _ := q.Float64()
		return f
	}
	worst := 0.0
	for range 6000 {
		n := 62 + r.IntN(3000)
		a := r.IntN(n)
		d := n - 1 - a
		if d < 0 {
			continue
		}
		got, want := consensus.Posterior(a, d), exact(a, d)
		if want < 0x1p-1022 { // subnormal: no float64 is within 1e-12 relative; doc nit
			if got > 0x1p-1022 {
				t.Errorf("Posterior(%d,%d)=%v, exact 0", a, d, got)
			}
			continue
		}
		rel := math.Abs(got-want) / want
		worst = max(worst, rel)
		if rel > 1e-12 {
			t.Errorf("Posterior(%d,%d)=%v, exact %v, rel err %v", a, d, got, want, rel)
		}
	}
	t.Logf("worst relative error %v", worst)
}

// A tie of summed weights goes to the more cautious label, INVALID, at
// exactly 1/2, whatever the order of the votes: two groups of the same
// reliabilities (0.99, 0.9, 0.6) tie, though 4.595+2.197+0.405 and
// 0.405+2.197+4.595, summed in vote order, differ in the last bit.
func TestWeighted_exactTieGoesToCaution(t *testing.T) {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.99, 2: 0.9, 3: 0.6, 4: 0.6, 5: 0.9, 6: 0.99}}
	votes := []consensus.Vote{
		{Session: 1, Label: consensus.LabelValid}, {Session: 2, Label: consensus.LabelValid}, {Session: 3, Label: consensus.LabelValid},
		{Session: 4, Label: consensus.LabelInvalid}, {Session: 5, Label: consensus.LabelInvalid}, {Session: 6, Label: consensus.LabelInvalid},
	}
	out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Label != consensus.LabelInvalid || out.Confidence != 0.5 {
		t.Errorf("an exact tie of equal sessions: %s wins at %v, want INVALID (the more cautious label) at 1/2", out.Label, out.Confidence)
	}
	if (consensus.Stop{Max: 6}).Accept(out) {
		t.Errorf("Stop.Accept takes a tie of equal sessions: %s at %v", out.Label, out.Confidence)
	}
}
