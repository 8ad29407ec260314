package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/trust"
)

// ending names how the call on src's claim or problem i ended: how many
// runs its tally counted and the sizes of the groups of equal answers
// among them (a delegation's equal results, a validation's equal
// verdicts), largest first ("3 runs: 2+1"), or "a leader alone". A run
// that gave no answer counts in the runs and in no group; a leader's
// check counts in neither.
func ending(src source, i int, resp *trust.Response, delegation bool) string {
	if resp.Evidence.Leader != nil {
		return "a leader alone"
	}
	groups := map[string]int{}
	runs := 0
	for _, st := range resp.Evidence.Steps {
		if st.Check {
			continue
		}
		for _, s := range st.Sessions {
			runs++
			a := src.answer(i, s)
			if a.failed {
				continue
			}
			k := string(a.verdict)
			if delegation {
				var err error
				if k, err = consensus.DefaultKey(json.RawMessage(a.output)); err != nil {
					k = string(a.output)
				}
			}
			groups[k]++
		}
	}
	sizes := slices.SortedFunc(maps.Values(groups), func(a, b int) int { return cmp.Compare(b, a) })
	parts := make([]string, len(sizes))
	for j, n := range sizes {
		parts[j] = strconv.Itoa(n)
	}
	if len(parts) == 0 {
		parts = []string{"no answer"}
	}
	return fmt.Sprintf("%d runs: %s", runs, strings.Join(parts, "+"))
}

// endingTally is what the calls that ended one way answered: how many
// they were and how many were right, how many the majority (plurality)
// of 5 and the best single session got right, and of those answered,
// the confidence stated and how many were right.
type endingTally struct {
	calls, right, fiveRight, bestRight int
	answered, answeredRight            int
	stated                             float64
}

// add returns the sum of e and o.
func (e endingTally) add(o endingTally) endingTally {
	e.calls += o.calls
	e.right += o.right
	e.fiveRight += o.fiveRight
	e.bestRight += o.bestRight
	e.answered += o.answered
	e.answeredRight += o.answeredRight
	e.stated += o.stated
	return e
}

// tallyEndings tallies the measured calls among calls by how they ended,
// beside the majority (plurality) of 5 and the best single session on
// the same calls (fiveWrong and bestRight, by call).
func tallyEndings(calls []call, measured func(int) bool, fiveWrong, bestRight []bool) map[string]endingTally {
	out := map[string]endingTally{}
	for i, k := range calls {
		if !measured(i) || k.ending == "" {
			continue
		}
		e := out[k.ending]
		e.calls++
		if k.correct {
			e.right++
		}
		if !fiveWrong[i] {
			e.fiveRight++
		}
		if bestRight[i] {
			e.bestRight++
		}
		if k.answered {
			e.answered++
			e.stated += k.confidence
			if k.correct {
				e.answeredRight++
			}
		}
		out[k.ending] = e
	}
	return out
}

// endingsShown is the share of the calls an ending must hold, pooled over
// a family's worlds, to have a row of its own.
const endingsShown = 0.005

// endings writes how adaptive's calls on f's worlds ended at the
// binding setting, pooled over the worlds' measured calls: each ending's
// share of the calls; how often adaptive, the majority (plurality) of 5
// and the best single session were right on them; and the confidence
// adaptive stated when it answered against how often it was right.
func (r *worldsReport) endings(w io.Writer, f *family) {
	five, answers := "majority of 5", "equal verdicts"
	if f.delegates() {
		five, answers = "plurality of 5", "equal answers"
	}
	c := worldCell{trust.PolicyAdaptive, r.cfg.binding()}
	pooled := map[string]endingTally{}
	total := 0
	for _, wr := range r.results[f.name] {
		for k, e := range wr.endings[c] {
			pooled[k] = pooled[k].add(e)
			total += e.calls
		}
	}
	if total == 0 {
		return
	}
	var other endingTally
	keys := slices.SortedFunc(maps.Keys(pooled), func(a, b string) int {
		return cmp.Or(cmp.Compare(pooled[b].calls, pooled[a].calls), strings.Compare(a, b))
	})
	fmt.Fprintf(w, "\nHow adaptive's calls ended with reputation %s, the measured calls of every world pooled: the runs its tally counted and the groups of %s among them, or a leader that decided alone; how often adaptive, the %s and the best single session were right on those calls (RETRY counts as wrong); and, on the calls adaptive answered, the confidence it stated against how often it was right:\n\n", r.cfg.binding(), answers, five)
	fmt.Fprintf(w, "| ending | share of the calls | adaptive right | %s right | best single right | answered | stated | right |\n", five)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	row := func(name string, e endingTally) {
		stated, right := "—", "—"
		if e.answered > 0 {
			stated, right = fmt.Sprintf("%.3f", e.stated/float64(e.answered)), pct(ratio(e.answeredRight, e.answered))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, pct(ratio(e.calls, total)), pct(ratio(e.right, e.calls)),
			pct(ratio(e.fiveRight, e.calls)), pct(ratio(e.bestRight, e.calls)), pct(ratio(e.answered, e.calls)), stated, right)
	}
	for _, k := range keys {
		e := pooled[k]
		if ratio(e.calls, total) < endingsShown {
			other = other.add(e)
			continue
		}
		row(k, e)
	}
	if other.calls > 0 {
		row(fmt.Sprintf("any other (under %s of the calls each)", pct(endingsShown)), other)
	}
}
