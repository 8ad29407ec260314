package consensus_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
)

// simTable returns a sim function reading the similarity of answers i and j
// from m, 0 for a pair m does not list.
func simTable(m map[[2]int]float64) func(i, j int) float64 {
	return func(i, j int) float64 {
		if i > j {
			i, j = j, i
		}
		return m[[2]int{i, j}]
	}
}

func TestGroupBySimilarity(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []any
		sims    map[[2]int]float64
		want    []int
	}{
		{
			name:    "paraphrases group, a changed fact stands alone",
			answers: []any{"a", "b", "c", "d"},
			sims:    map[[2]int]float64{{0, 1}: 0.95, {0, 2}: 0.93, {1, 2}: 0.97, {0, 3}: 0.99, {1, 3}: 0.5, {2, 3}: 0.95},
			want:    []int{0, 0, 0, 1},
		},
		{
			// single linkage would join 0 and 2 through 1
			name:    "no chaining: every member must match",
			answers: []any{"a", "b", "c"},
			sims:    map[[2]int]float64{{0, 1}: 0.95, {1, 2}: 0.95, {0, 2}: 0.5},
			want:    []int{0, 0, 1},
		},
		{
			name:    "the first group that matches in full wins",
			answers: []any{"a", "b", "c"},
			sims:    map[[2]int]float64{{0, 1}: 0.1, {0, 2}: 0.95, {1, 2}: 0.99},
			want:    []int{0, 1, 0},
		},
		{
			name:    "missing answers and equal keys",
			answers: []any{nil, "same  text", "same text", json.RawMessage(`"same text"`), "other"},
			sims:    map[[2]int]float64{{1, 4}: 0.2},
			want:    []int{-1, 0, 0, 0, 1},
		},
		{
			name:    "NaN is no match",
			answers: []any{"a", "b"},
			sims:    map[[2]int]float64{{0, 1}: math.NaN()},
			want:    []int{0, 1},
		},
		{
			name:    "the threshold itself matches",
			answers: []any{"a", "b"},
			sims:    map[[2]int]float64{{0, 1}: 0.9},
			want:    []int{0, 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := consensus.GroupBySimilarity(tc.answers, 0.9, simTable(tc.sims))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, g.Groups); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			for i, a := range tc.answers {
				for j, b := range tc.answers {
					if a == nil || b == nil {
						continue
					}
					ka, err1 := g.Key(a)
					kb, err2 := g.Key(b)
					if err1 != nil || err2 != nil {
						t.Fatalf("Key: %v, %v", err1, err2)
					}
					if (ka == kb) != (tc.want[i] == tc.want[j]) {
						t.Errorf("answers %d and %d: keys %q and %q, want equal = %v", i, j, ka, kb, tc.want[i] == tc.want[j])
					}
				}
			}
		})
	}
}

// TestGroupBySimilarity_pairs checks that Pairs lists each compared pair once,
// in order, with the similarity sim gave.
func TestGroupBySimilarity_pairs(t *testing.T) {
	sims := map[[2]int]float64{{0, 1}: 0.95, {0, 2}: 0.2, {1, 2}: 0.3}
	g, err := consensus.GroupBySimilarity([]any{"a", "b", "c"}, 0.9, simTable(sims))
	if err != nil {
		t.Fatal(err)
	}
	want := []consensus.Similarity{{A: 0, B: 1, Value: 0.95}, {A: 0, B: 2, Value: 0.2}, {A: 1, B: 2, Value: 0.3}}
	if diff := cmp.Diff(want, g.Pairs, cmpopts.IgnoreUnexported(consensus.Grouping{})); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
}

// TestGroupBySimilarity_prefix checks that a later answer never moves an
// earlier one: grouping the first n answers gives the first n groups of
// grouping all of them.
func TestGroupBySimilarity_prefix(t *testing.T) {
	answers := []any{"a", "b", "c", "d", "e"}
	sim := func(i, j int) float64 { return math.Abs(math.Sin(float64(7*i + 13*j))) }
	all, err := consensus.GroupBySimilarity(answers, 0.5, sim)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < len(answers); n++ {
		g, err := consensus.GroupBySimilarity(answers[:n], 0.5, sim)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all.Groups[:n], g.Groups); diff != "" {
			t.Errorf("first %d answers (-all +prefix):\n%s", n, diff)
		}
	}
}

func TestGroupBySimilarity_errors(t *testing.T) {
	sim := func(int, int) float64 { return 1 }
	for _, th := range []float64{0, -0.1, 1.01, math.NaN()} {
		if _, err := consensus.GroupBySimilarity([]any{"a"}, th, sim); !errors.Is(err, consensus.ErrInvalid) {
			t.Errorf("threshold %v: err = %v, want ErrInvalid", th, err)
		}
	}
	if _, err := consensus.GroupBySimilarity([]any{make(chan int)}, 0.9, sim); !errors.Is(err, consensus.ErrInvalid) {
		t.Errorf("unencodable answer: err = %v, want ErrInvalid", err)
	}
	g, err := consensus.GroupBySimilarity([]any{"a"}, 0.9, sim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Key("never grouped"); !errors.Is(err, consensus.ErrInvalid) {
		t.Errorf("Key of an ungrouped answer: err = %v, want ErrInvalid", err)
	}
}

// TestGroupBySimilarity_majority counts grouped paraphrases as one answer.
func TestGroupBySimilarity_majority(t *testing.T) {
	answers := []any{"Marie Curie, 1903", "In 1903, Marie Curie", "Marie Curie, 1911"}
	sims := map[[2]int]float64{{0, 1}: 0.97, {0, 2}: 0.7, {1, 2}: 0.7}
	g, err := consensus.GroupBySimilarity(answers, 0.9, simTable(sims))
	if err != nil {
		t.Fatal(err)
	}
	votes := make([]consensus.Vote, len(answers))
	for i, a := range answers {
		votes[i] = consensus.Vote{Label: consensus.LabelOK, Answer: a}
	}
	out, err := consensus.Majority{}.Aggregate(votes, consensus.Policy{Key: g.Key})
	if err != nil {
		t.Fatal(err)
	}
	if out.Winner != 0 || out.Agreeing != 2 || out.Against != 1 {
		t.Errorf("winner %d agreeing %d against %d, want 0, 2, 1", out.Winner, out.Agreeing, out.Against)
	}
}
