package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/vouchkit/vouch/trust"
)

// spread is a figure measured on several draws of the reported calls:
// the seed's own draw first, then the others.
type spread []float64

// median returns the middle figure (the mean of the two middle ones for
// an even count).
func (s spread) median() float64 {
	v := slices.Sorted(slices.Values(s))
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// atMost counts the figures at most bound.
func (s spread) atMost(bound float64) int {
	n := 0
	for _, x := range s {
		if x <= bound {
			n++
		}
	}
	return n
}

// draws returns the measured stats of tier pol at setting st on the
// seed's own draw of the reported calls and on each other draw.
func (r *realReport) draws(t *table, pol trust.Policy, st setting) []stats {
	out := []stats{r.measured(r.get(t, pol, st))}
	for d := 1; d <= r.cfg.draws; d++ {
		out = append(out, r.measured(r.cells[cell{workload: t.spec.name, policy: pol, rep: on, outcomes: st.outcomes, draw: d}]))
	}
	return out
}

// reportedGap returns how much more often the reported calls among calls
// were right than every call, in points (negative: less often); calls
// hold at least one reported call.
func reportedGap(calls []call) float64 {
	var right, reported, reportedRight int
	for _, k := range calls {
		if k.correct {
			right++
		}
		if k.reported {
			reported++
			if k.correct {
				reportedRight++
			}
		}
	}
	return 100 * (ratio(reportedRight, reported) - ratio(right, len(calls)))
}

// drawTable writes, when other draws were measured, how fast, safe and
// adaptive's ECE, accuracy and runs spread over the draws of which calls'
// outcomes the host reports: the same claims, workers and seed, another
// 2% or 5% of them reported. A calibration map learns from a few hundred
// outcomes, and which ones they are moves its ECE as much as a change of
// method would.
func (r *realReport) drawTable(w io.Writer, t *table) {
	if r.cfg.draws == 0 {
		return
	}
	n := r.cfg.draws + 1
	fmt.Fprintf(w, "\nOver %d draws of the reported calls (the seed's own and %d others; the claims, their order and the workers unchanged), measured:\n\n", n, r.cfg.draws)
	fmt.Fprintf(w, "| tier | reputation | ECE, seed's draw | ECE, median | ECE, range | draws with ECE at most %.2f | accuracy, median | accuracy, range | runs per call, median | runs per call, range | reported calls right, against every call (points), seed's draw |\n", targetRealECE)
	fmt.Fprintln(w, "|---|---|---:|---:|---|---:|---:|---|---:|---|---:|")
	for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
		for _, st := range r.cfg.settings() {
			if st.rep != on || st.outcomes == 0 {
				continue
			}
			var ece, acc, runs spread
			for _, s := range r.draws(t, pol, st) {
				ece, acc, runs = append(ece, s.ece()), append(acc, s.accuracy()), append(runs, s.runsPerCall())
			}
			fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f–%.3f | %d of %d | %s | %s–%s | %.2f | %.2f–%.2f | %+.1f |\n",
				pol, st, ece[0], ece.median(), slices.Min(ece), slices.Max(ece), ece.atMost(targetRealECE), n,
				pct2(acc.median()), pct2(slices.Min(acc)), pct2(slices.Max(acc)), runs.median(), slices.Min(runs), slices.Max(runs), reportedGap(r.get(t, pol, st)))
		}
	}
}

// learnedTable writes, for adaptive at each share of outcomes reported,
// what the engine's book had learned of each session by the episode's
// end against how often the session was right as a judge, with the
// session's share of adaptive's runs: on the seed's own draw of the
// reported calls and, when others were measured, their range. Adaptive
// runs the sessions it ranks first on every call and the others only when
// those are unsure, on the harder claims, so what a record says depends
// on the part the session played as much as on the session.
func (r *realReport) learnedTable(w io.Writer, t *table) {
	for _, st := range r.cfg.settings() {
		if st.rep != on || st.outcomes == 0 {
			continue
		}
		own := cell{workload: t.spec.name, policy: trust.PolicyAdaptive, rep: on, outcomes: st.outcomes}
		runs := r.measured(r.cells[own])
		fmt.Fprintf(w, "\nLearned at the end of adaptive's episode (reputation %s): each session's reliability as the engine's book reads it, against how often it was right as a judge, and its share of adaptive's runs on the measured calls:\n\n", st)
		header, rule := "| session | right as a judge | share of adaptive's runs | learned reliability, seed's draw |", "|---|---:|---:|---:|"
		if r.cfg.draws > 0 {
			header, rule = header+fmt.Sprintf(" learned, range over %d draws | share of runs, range |", r.cfg.draws+1), rule+"---|---|"
		}
		fmt.Fprintln(w, header)
		fmt.Fprintln(w, rule)
		for s := range panelSize {
			fmt.Fprintf(w, "| %d | %s | %s | %.3f |", s+1, pct2(r.measured(r.single[t.spec.name][s]).accuracy()), pct(runs.share(s)), r.learned[own][s])
			if r.cfg.draws > 0 {
				learned, share := spread{r.learned[own][s]}, spread{runs.share(s)}
				for d := 1; d <= r.cfg.draws; d++ {
					c := own
					c.draw = d
					learned = append(learned, r.learned[c][s])
					share = append(share, r.measured(r.cells[c]).share(s))
				}
				fmt.Fprintf(w, " %.3f–%.3f | %s–%s |", slices.Min(learned), slices.Max(learned), pct(slices.Min(share)), pct(slices.Max(share)))
			}
			fmt.Fprintln(w)
		}
	}
}
