package consensus_test

import (
	"encoding/json"
	"fmt"

	"github.com/vouchkit/vouch/consensus"
)

// Five replicas estimate a count. One answers in words, which holds no
// number and casts no vote; the median of the other four is their lower
// middle number, and the answers within 2% of it agree.
func ExampleMedian() {
	votes := []consensus.Vote{
		{Session: 1, Label: consensus.LabelOK, Answer: json.RawMessage(`1200`)},
		{Session: 2, Label: consensus.LabelOK, Answer: json.RawMessage(`"1190"`)},
		{Session: 3, Label: consensus.LabelOK, Answer: json.RawMessage(`"about twelve hundred"`)},
		{Session: 4, Label: consensus.LabelOK, Answer: json.RawMessage(`1500`)},
		{Session: 5, Label: consensus.LabelOK, Answer: json.RawMessage(`1210.0`)},
	}
	agg := consensus.Median{Tolerance: consensus.Tolerance{Relative: 0.02}}
	out, err := agg.Aggregate(votes, consensus.Policy{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("median %v, agreeing %v of %d numbers, agreement %.2f, confidence %.3f\n",
		out.Value, out.Backers(nil), out.Agreeing+out.Against, out.Agreement, out.Confidence)
	_, err = consensus.ParseNumber(votes[2].Answer)
	fmt.Println(err)
	// Output:
	// median 1200, agreeing [0 1 4] of 4 numbers, agreement 0.75, confidence 0.812
	// consensus: not a number: the string "about twelve hundred" is not written as one JSON number
}

// Median of means deals five numbers into the blocks {1st, 4th},
// {2nd, 5th} and {3rd} and takes the median of the blocks' means.
func ExampleMedianOfMeans() {
	votes := []consensus.Vote{
		{Label: consensus.LabelOK, Answer: 10},
		{Label: consensus.LabelOK, Answer: 12},
		{Label: consensus.LabelOK, Answer: 11},
		{Label: consensus.LabelOK, Answer: 10},
		{Label: consensus.LabelOK, Answer: 14},
	}
	out, err := consensus.MedianOfMeans{Tolerance: consensus.Tolerance{Absolute: 1}}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("means 10, 13, 11: aggregate %v, agreeing %v\n", out.Value, out.Backers(nil))
	// Output:
	// means 10, 13, 11: aggregate 11, agreeing [0 1 2 3]
}
