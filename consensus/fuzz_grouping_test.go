package consensus_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
)

// fuzzSimilarity decodes byte b of a similarity matrix: mostly a number
// in [0, 1.275), else a value no embedding should give but a sim
// function might (NaN, ±Inf, far out of range, the threshold itself or
// just below it).
func fuzzSimilarity(b byte, threshold float64) float64 {
	if b < 0xf0 {
		return float64(b) / 200
	}
	return []float64{
		math.NaN(), math.Inf(1), math.Inf(-1), -1, 1, math.Nextafter(1, 2), 2, math.Copysign(0, -1),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0.5,
		threshold, math.Nextafter(threshold, math.Inf(-1)), math.Nextafter(threshold, math.Inf(1)), -threshold,
	}[b-0xf0]
}

// FuzzGroupBySimilarity groups up to eight answers (missing ones, equal
// keys) under any threshold and any similarities, read from a matrix that
// need not be symmetric: a bad threshold is refused with ErrInvalid;
// otherwise sim is asked once for each pair of present answers with
// different keys, earlier answer first; equal keys share a group; every
// two answers of a group with different keys have a similarity that
// reaches the threshold; an answer that starts a group matched no earlier
// group in full; the grouping of a prefix of the answers is a prefix of
// the grouping; Key names each answer's group; and the JSON form, what a
// response's evidence records, encodes and decodes to the same grouping.
func FuzzGroupBySimilarity(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4}, []byte{190, 186, 194, 198, 100, 190}, 0.9)
	f.Add([]byte{1, 0, 1, 2, 3}, []byte{0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9}, 0.5)
	f.Add([]byte{1, 2, 3}, []byte{0xfc, 0xfd, 0xfe, 0xff, 0xfc, 0xfd, 0xfe, 0xff, 0xfc}, 1.0)
	f.Add([]byte{1, 2}, []byte{0xf0, 0xf0, 0xf0, 0xf0}, math.NaN())
	f.Add([]byte{1, 2}, []byte{200, 200, 200, 200}, 0.0)
	f.Add([]byte{1, 2, 3}, []byte{10, 250, 20, 30, 40}, 1.5)
	f.Fuzz(func(t *testing.T, keys, sims []byte, threshold float64) {
		if len(keys) > 8 {
			keys = keys[:8]
		}
		answers := make([]any, len(keys))
		for i, k := range keys {
			if k%6 != 0 {
				answers[i] = fmt.Sprintf("answer %d", k%6) // five answers, repeated
			}
		}
		n := len(answers)
		matrix := make([]float64, n*n) // row i, column j: sim(i, j)
		for x := range matrix {
			if x < len(sims) {
				matrix[x] = fuzzSimilarity(sims[x], threshold)
			}
		}
		var asked [][2]int
		sim := func(i, j int) float64 {
			asked = append(asked, [2]int{i, j})
			return matrix[i*n+j]
		}
		g, err := consensus.GroupBySimilarity(answers, threshold, sim)
		if !(threshold > 0 && threshold <= 1) {
			if !errors.Is(err, consensus.ErrInvalid) || g != nil {
				t.Fatalf("threshold %v: %v, %v; want ErrInvalid", threshold, g, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("GroupBySimilarity: %v", err)
		}
		if len(g.Groups) != n {
			t.Fatalf("%d groups for %d answers", len(g.Groups), n)
		}
		// sim is asked once per pair of present answers with different keys.
		seen := map[[2]int]bool{}
		for _, p := range asked {
			i, j := p[0], p[1]
			if i >= j || answers[i] == nil || answers[j] == nil || answers[i] == answers[j] || seen[p] {
				t.Fatalf("sim(%d, %d) asked for answers %v and %v (asked %v)", i, j, answers[i], answers[j], asked)
			}
			seen[p] = true
		}
		next, first := 0, map[any]int{} // the next group to start; a key's first answer
		for i, a := range answers {
			gi := g.Groups[i]
			switch {
			case a == nil:
				if gi != -1 {
					t.Fatalf("missing answer %d in group %d", i, gi)
				}
				continue
			case gi < 0 || gi > next:
				t.Fatalf("answer %d in group %d; the next group to start is %d", i, gi, next)
			case gi == next:
				next++
			}
			if j, ok := first[a]; ok {
				if g.Groups[j] != gi {
					t.Fatalf("answers %d and %d share a key but not a group: %v", j, i, g.Groups)
				}
				continue
			}
			first[a] = i
			for j := range i {
				if answers[j] == nil || answers[j] == a || first[answers[j]] != j {
					continue
				}
				v := matrix[j*n+i]
				if !seen[[2]int{j, i}] && g.Groups[j] == gi {
					t.Fatalf("answers %d and %d grouped without asking sim", j, i)
				}
				if g.Groups[j] == gi && !(v >= threshold) {
					t.Fatalf("answers %d and %d grouped at similarity %v < %v: %v", j, i, v, threshold, g.Groups)
				}
			}
			if gi == next-1 { // started a group: no earlier group matched in full
				for h := range gi {
					full := true
					for j := range i {
						if g.Groups[j] == h && first[answers[j]] == j && !(matrix[j*n+i] >= threshold) {
							full = false
						}
					}
					if full {
						t.Fatalf("answer %d started group %d though group %d matched it in full: %v", i, gi, h, g.Groups)
					}
				}
			}
			if k, err := g.Key(a); err != nil || k != fmt.Sprintf("group %d", gi) {
				t.Fatalf("Key(%v) = %q, %v; want group %d", a, k, err, gi)
			}
		}
		for m := range n {
			p, err := consensus.GroupBySimilarity(answers[:m], threshold, func(i, j int) float64 { return matrix[i*n+j] })
			if err != nil || !cmp.Equal(p.Groups, g.Groups[:m]) {
				t.Fatalf("the first %d answers group as %v, %v; all of them as %v", m, p.Groups, err, g.Groups)
			}
		}
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("encoding the grouping: %v", err)
		}
		var back consensus.Grouping
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decoding %s: %v", b, err)
		}
		if d := cmp.Diff(g, &back, cmpopts.IgnoreUnexported(consensus.Grouping{}), cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("the grouping after JSON (-before +after):\n%s", d)
		}
	})
}
