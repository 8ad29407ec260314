package main

import (
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/trust"
)

// followReports answers each call as the rule right most often on the
// reported calls: the majority (plurality) of 5 or one of the sessions,
// each known on every reported call, as if all five had run on it; a tie
// goes to the majority, then to the first session. With hindsight the
// rule is chosen once, on every reported call, later ones included;
// without, call by call on the calls reported before it. Either is what
// a rule that keeps score on the reports could answer with every run it
// asked for and no margin, and so a measure of what the reports can tell,
// not of a tier. rules[0] is the majority's calls, then each session's;
// reported says which calls the host reported. It returns the calls of
// the rules followed.
func followReports(rules [][]call, reported func(i int) bool, hindsight bool) []call {
	n := len(rules[0])
	score := make([]int, len(rules))
	count := func(i int) {
		if !reported(i) {
			return
		}
		for r := range rules {
			if rules[r][i].correct {
				score[r]++
			}
		}
	}
	if hindsight {
		for i := range n {
			count(i)
		}
	}
	out := make([]call, n)
	for i := range n {
		lead := 0
		for r := range rules {
			if score[r] > score[lead] {
				lead = r
			}
		}
		out[i] = rules[lead][i]
		if !hindsight {
			count(i)
		}
	}
	return out
}

// reportsTold returns, over the worlds of f, the accuracy on the measured
// calls of following the reports (followReports, with hindsight or not)
// less the accuracy target's reference, the better of the best single
// session and the majority of 5 (for a delegation, the plurality of 5):
// the worst world's, the median, and on how many worlds of how many it
// meets the target; false when no outcome was reported. what names the
// row.
func (r *worldsReport) reportsTold(f *family, hindsight bool) (what, worst, median string, met, worlds int, ok bool) {
	what = "what the reports can tell: the rule right most often on the calls reported so far (the majority, or plurality, of 5 or one session, each known on every reported call, as if all five ran), followed call by call, less the accuracy target's reference"
	if hindsight {
		what = "the same with hindsight: the rule right most often on every reported call, later ones included, followed on every call"
	}
	var ds spread
	for _, wr := range r.results[f.name] {
		followed := wr.followed
		if hindsight {
			followed = wr.chosen
		}
		if followed.calls == 0 {
			continue
		}
		ref, loss := max(wr.best.accuracy(), wr.five.accuracy()), 0.0
		if f.delegates() {
			ref, loss = wr.five.accuracy(), targetNumericLoss
		}
		d := followed.accuracy() - ref
		ds = append(ds, d)
		if d+loss >= 0 {
			met++
		}
	}
	if len(ds) == 0 {
		return "", "", "", 0, 0, false
	}
	return what, fmt.Sprintf("%+.2f points", 100*slices.Min(ds)), fmt.Sprintf("%+.2f points", 100*ds.median()), met, len(ds), true
}

// A dissent counts the calls a session disagreed with the strict majority
// of the other sessions' verdicts, and how many of those it got right.
type dissent struct{ calls, disagreed, won int }

// againstOthers returns the record of session best of a validation world
// against the strict majority of the other sessions' verdicts, over every
// call, single holding each session's verdicts alone: what a lead
// (reputation.Book.Leader) is scored on, had every session run on every
// call.
func againstOthers(single [panelSize][]call, best int) dissent {
	var rec dissent
	for i, c := range single[best] {
		rec.calls++
		valid := 0
		for s := range single {
			if s != best && single[s][i].status == trust.StatusValid {
				valid++
			}
		}
		others := trust.StatusInvalid
		switch {
		case 2*valid == panelSize-1:
			continue // no strict majority
		case 2*valid > panelSize-1:
			others = trust.StatusValid
		}
		if c.status != others {
			rec.disagreed++
			if c.correct {
				rec.won++
			}
		}
	}
	return rec
}
