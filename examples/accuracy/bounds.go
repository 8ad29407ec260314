package main

import (
	"fmt"
	"io"
	"math"
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
		if metMargin(d + loss) {
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

// weighedMajority returns the calls of the majority of 5 of a validation
// world whose sessions' verdicts alone single holds, each vote weighed
// by the log-odds of its session's rate of being right, those rates read
// on the calls rated says: one way, one rate a session; and two ways, a
// rate a session and true verdict (how often it votes VALID when the
// claim holds, and INVALID when it does not), for judges that lean to
// one verdict. Each rate counts one pseudo-call right and one
// wrong; a weighted tie answers INVALID. Read on every call (rated always
// true), the rates are an oracle no host has, and the two majorities bound
// what weighing the votes two ways can add to weighing them one way.
func weighedMajority(single [panelSize][]call, rated func(i int) bool) (oneWay, twoWay []call) {
	n := len(single[0])
	truth := make([]bool, n) // the claim holds
	for i, c := range single[0] {
		truth[i] = (c.status == trust.StatusValid) == c.correct
	}
	// right[s][t] counts session s's right votes on calls of truth t,
	// of calls[s][t] calls, from one right and one wrong pseudo-call.
	var right, calls [panelSize][2]float64
	for s := range single {
		right[s], calls[s] = [2]float64{1, 1}, [2]float64{2, 2}
		for i, c := range single[s] {
			if !rated(i) {
				continue
			}
			t := 0
			if truth[i] {
				t = 1
			}
			calls[s][t]++
			if c.correct {
				right[s][t]++
			}
		}
	}
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	oneWay, twoWay = make([]call, n), make([]call, n)
	for i := range n {
		var one, two float64 // the weight of VALID against INVALID
		for s := range single {
			r := (right[s][0] + right[s][1]) / (calls[s][0] + calls[s][1])
			a := right[s][1] / calls[s][1] // VALID when the claim holds
			b := right[s][0] / calls[s][0] // INVALID when it does not
			if single[s][i].status == trust.StatusValid {
				one += logit(r)
				two += math.Log(a / (1 - b))
			} else {
				one -= logit(r)
				two += math.Log((1 - a) / b)
			}
		}
		oneWay[i], twoWay[i] = verdictCall(one > 0, truth[i]), verdictCall(two > 0, truth[i])
	}
	return oneWay, twoWay
}

// verdictCall is a call that answered VALID, or INVALID, on a claim that
// holds, or not.
func verdictCall(valid, holds bool) call {
	st := trust.StatusInvalid
	if valid {
		st = trust.StatusValid
	}
	return call{status: st, correct: valid == holds, answered: true, launched: panelSize}
}

// A weighing is what weighedMajority's two majorities answered on a
// world's measured calls.
type weighing struct{ oneWay, twoWay stats }

// weighed returns the weighing of single's majorities at the rates of
// the calls rated, summarized on the measured calls.
func weighed(w *world, single [panelSize][]call, rated func(i int) bool) weighing {
	one, two := weighedMajority(single, rated)
	return weighing{summarize(one, w.measuredCall), summarize(two, w.measuredCall)}
}

// twoWays writes what weighing each vote two ways adds, over the worlds
// rs of a validation family, to weighing it one way (weighedMajority):
// at the rates of every call, and at those of the reported calls.
func (r *worldsReport) twoWays(w io.Writer, rs []*worldResult, over func(func(*worldResult) float64) spread) {
	gain := func(get func(*worldResult) weighing) (spread, spread) {
		acc := over(func(wr *worldResult) float64 { return get(wr).oneWay.accuracy() })
		return acc, over(func(wr *worldResult) float64 { return get(wr).twoWay.accuracy() - get(wr).oneWay.accuracy() })
	}
	one, d := gain(func(wr *worldResult) weighing { return wr.oracle })
	fmt.Fprintf(w, "\nWeighing each vote two ways, by how often its session votes VALID when the claim holds and INVALID when it does not, rather than by one rate a session: the majority of 5 weighed one way at the rates of every call of its world (an oracle) answers %s (median world); two ways it answers %+.2f points more (median; %+.2f to %+.2f over the worlds).",
		pct(one.median()), 100*d.median(), 100*slices.Min(d), 100*slices.Max(d))
	if _, d := gain(func(wr *worldResult) weighing { return wr.byReports }); rs[0].byReports.oneWay.calls > 0 {
		fmt.Fprintf(w, " At the rates of the calls reported at %g%% of outcomes, %+.2f points (%+.2f to %+.2f).", 100*r.cfg.binding().outcomes, 100*d.median(), 100*slices.Min(d), 100*slices.Max(d))
	}
	fmt.Fprintln(w)
}
