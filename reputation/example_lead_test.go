package reputation_test

import (
	"fmt"

	"github.com/vouchkit/vouch/reputation"
)

// How many reported disagreements a lead takes. A session that wins a
// share p of its disagreements with the other votes passes the sign test
// at DefaultLeadLevel, checked after every report, after the number of
// disagreements shown, with the chances shown of passing within 9 and
// within 20 of them: the exact distribution of the first pass, computed
// from Lead.PValue. At a LeadLevel of 1/2 (Options.LeadLevel) every
// session passes sooner, one no better than the others too.
func ExampleLead_PValue_disagreements() {
	for _, level := range []struct {
		name string
		at   float64
	}{{"1/8 (DefaultLeadLevel)", reputation.DefaultLeadLevel}, {"1/2", 0.5}} {
		fmt.Printf("level %s:\n", level.name)
		for _, p := range []float64{0.5, 0.6, 0.7, 0.8, 0.93} {
			median, within := firstLead(level.at, p, 200, 9, 20)
			fmt.Printf("wins %2.0f%%: median %3s, within 9: %3.0f%%, within 20: %3.0f%%\n", 100*p, median, 100*within[0], 100*within[1])
		}
	}
	// Output:
	// level 1/8 (DefaultLeadLevel):
	// wins 50%: median   —, within 9:  20%, within 20:  27%
	// wins 60%: median  18, within 9:  36%, within 20:  53%
	// wins 70%: median   9, within 9:  58%, within 20:  81%
	// wins 80%: median   3, within 9:  81%, within 20:  97%
	// wins 93%: median   3, within 9:  99%, within 20: 100%
	// level 1/2:
	// wins 50%: median   1, within 9:  75%, within 20:  82%
	// wins 60%: median   1, within 9:  88%, within 20:  95%
	// wins 70%: median   1, within 9:  96%, within 20:  99%
	// wins 80%: median   1, within 9:  99%, within 20: 100%
	// wins 93%: median   1, within 9: 100%, within 20: 100%
}

// firstLead returns, for a session that wins each disagreement with
// chance p, the number of disagreements (up to limit) by which it has
// passed the lead's sign test at level with chance one half or more ("—"
// when never), and the chance it has passed by each of at.
func firstLead(level, p float64, limit int, at ...int) (median string, within []float64) {
	median = "—"
	within = make([]float64, len(at))
	// alive[w] is the chance of w wins and n−w losses with no pass yet.
	alive := []float64{1}
	passed := 0.0
	for n := 1; n <= limit; n++ {
		next := make([]float64, n+1)
		for w, m := range alive {
			next[w+1] += m * p
			next[w] += m * (1 - p)
		}
		for w, m := range next {
			if m > 0 && (reputation.Lead{Won: float64(w), Lost: float64(n - w)}).PValue() <= level {
				passed += m
				next[w] = 0
			}
		}
		alive = next
		if median == "—" && passed >= 0.5 {
			median = fmt.Sprint(n)
		}
		for i, k := range at {
			if n == k {
				within[i] = passed
			}
		}
	}
	return median, within
}
