package consensus_test

import (
	"fmt"

	"github.com/vouchkit/vouch/consensus"
)

func ExamplePluralityPosteriorAt() {
	// Five runs of a panel right four times in five answer a number:
	// a pair among three single answers. Wrong answers coincide one
	// time in ten, so the pair is likelier right than a coincidence of
	// two mistakes; the uniform prior, which expects a run as likely
	// wrong as right, doubts it.
	groups := []int{2, 1, 1, 1}
	fmt.Printf("at 0.8: %.3f\n", consensus.PluralityPosteriorAt(groups, 0, 0.1, 0.8))
	fmt.Printf("at 0.6: %.3f\n", consensus.PluralityPosteriorAt(groups, 0, 0.1, 0.6))
	fmt.Printf("uniform: %.3f\n", consensus.PluralityPosterior(groups, 0, 0.1))
	// One answer alone states the panel's reliability.
	fmt.Printf("one answer: %.3f\n", consensus.PluralityPosteriorAt([]int{1}, 0, 0.1, 0.8))
	// Output:
	// at 0.8: 0.824
	// at 0.6: 0.723
	// uniform: 0.517
	// one answer: 0.800
}

func ExamplePluralityPosteriorsAt() {
	// Two pairs and a single answer: each pair is as likely right as the
	// other, the single answer less so, and what the groups leave is the
	// chance that none is right.
	groups := []int{2, 2, 1}
	ps := consensus.PluralityPosteriorsAt(nil, groups, 0.1, 0.8)
	none := 1.0
	for i, p := range ps {
		fmt.Printf("group %d of %d: %.3f\n", i, groups[i], p)
		none -= p
	}
	fmt.Printf("none: %.3f\n", none)
	// Output:
	// group 0 of 2: 0.427
	// group 1 of 2: 0.427
	// group 2 of 1: 0.080
	// none: 0.066
}
