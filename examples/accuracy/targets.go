package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/vouchkit/vouch/trust"
)

// The targets of the heterogeneous and easy panels and of the traps.
const (
	targetRuns          = 2.35  // heterogeneous: adaptive's runs per call, at most
	targetEasyRuns      = 2.1   // easy: adaptive's runs per call, at most
	targetMaxRuns       = 5     // adaptive's runs in any call, at most
	targetMaxShare      = 0.40  // any one session's share of a tier's runs, at most
	targetECE           = 0.03  // every tier's ECE, at most
	targetEasyLoss      = 0.001 // easy: adaptive within this of the majority of 5
	targetTrapOverConfi = 0.10  // traps: stated confidence above observed accuracy on trap claims, at most
)

// A target is one target as measured.
type target struct {
	workload string
	setting  string // reputation off or on, and the outcomes reported
	what     string
	measured string
	met      bool
}

// targets returns every target as measured, for each variant measured:
// reputation off shows where today's engine stands.
func (r *report) targets() []target {
	var ts []target
	for _, v := range r.settings() {
		add := func(wl, what, measured string, met bool) {
			ts = append(ts, target{wl, v.String(), what, measured, met})
		}
		if _, ok := r.claims["heterogeneous"]; ok {
			a, five := r.measured(r.get("heterogeneous", trust.PolicyAdaptive, v)), r.measured(r.five["heterogeneous"])
			add("heterogeneous", "adaptive at least as accurate as a majority of 5 (aim: +1 point)",
				fmt.Sprintf("%s against %s (%+.2f points)", pct2(a.accuracy()), pct2(five.accuracy()), 100*(a.accuracy()-five.accuracy())),
				a.accuracy() >= five.accuracy())
			add("heterogeneous", fmt.Sprintf("adaptive at most %.2f runs per call", targetRuns), fmt.Sprintf("%.3f", a.runsPerCall()), a.runsPerCall() <= targetRuns)
			add("heterogeneous", fmt.Sprintf("adaptive at most %d runs in any call", targetMaxRuns), fmt.Sprint(a.maxRuns), a.maxRuns <= targetMaxRuns)
			add("heterogeneous", fmt.Sprintf("no session above %.0f%% of adaptive's runs", 100*targetMaxShare), pct(a.maxShare()), a.maxShare() <= targetMaxShare)
			ts = append(ts, r.everyTier("heterogeneous", v)...)
		}
		if _, ok := r.claims["easy"]; ok {
			a, five := r.measured(r.get("easy", trust.PolicyAdaptive, v)), r.measured(r.five["easy"])
			add("easy", fmt.Sprintf("adaptive at most %.1f runs per call", targetEasyRuns), fmt.Sprintf("%.3f", a.runsPerCall()), a.runsPerCall() <= targetEasyRuns)
			add("easy", "adaptive within 0.1 points of a majority of 5",
				fmt.Sprintf("%s against %s (%+.2f points)", pct2(a.accuracy()), pct2(five.accuracy()), 100*(a.accuracy()-five.accuracy())),
				a.correct*five.calls >= five.correct*a.calls-int(math.Round(targetEasyLoss*float64(a.calls*five.calls))))
			ece := r.eces("easy", v)
			add("easy", fmt.Sprintf("ECE at most %.2f for every tier", targetECE), ece.text, ece.max <= targetECE)
		}
		if _, ok := r.claims["traps"]; ok {
			if v.rep == on {
				a, b := r.measured(r.get("traps", trust.PolicyAdaptive, v)), r.measured(r.get("traps", trust.PolicyAdaptive, setting{rep: off}))
				add("traps", "adaptive loses no accuracy against reputation off",
					fmt.Sprintf("%s against %s (%+.2f points)", pct2(a.accuracy()), pct2(b.accuracy()), 100*(a.accuracy()-b.accuracy())),
					a.accuracy() >= b.accuracy())
				add("traps", "adaptive spends no more runs than reputation off",
					fmt.Sprintf("%.3f against %.3f", a.runsPerCall(), b.runsPerCall()), a.runsPerCall() <= b.runsPerCall())
			}
			var parts []string
			worst := -1.0
			for _, pol := range tiers {
				s := r.traps(r.get("traps", pol, v))
				over := s.meanStated() - s.answeredRight()
				worst = max(worst, over)
				parts = append(parts, fmt.Sprintf("%s %+.1f", pol, 100*over))
			}
			add("traps", "on trap claims, stated confidence at most 10 points above observed accuracy (every tier)",
				strings.Join(parts, ", "), worst <= targetTrapOverConfi)
		}
	}
	return ts
}

// everyTier returns the heterogeneous panel's targets that hold for every
// tier: calibration, and confidence rising with accuracy.
func (r *report) everyTier(wl string, v setting) []target {
	ece := r.eces(wl, v)
	var falling []string
	for _, pol := range tiers {
		if !r.measured(r.get(wl, pol, v)).increasing(minBinCalls) {
			falling = append(falling, string(pol))
		}
	}
	rising := "every tier"
	if len(falling) > 0 {
		rising = "falls for " + strings.Join(falling, ", ")
	}
	return []target{
		{wl, v.String(), fmt.Sprintf("ECE at most %.2f for every tier", targetECE), ece.text, ece.max <= targetECE},
		{wl, v.String(), fmt.Sprintf("observed accuracy rises with stated confidence across bins (of %d calls or more)", minBinCalls), rising, len(falling) == 0},
	}
}

// eceSummary is every tier's ECE on a workload, and the largest.
type eceSummary struct {
	text string
	max  float64
}

func (r *report) eces(wl string, v setting) eceSummary {
	var parts []string
	var m float64
	for _, pol := range tiers {
		e := r.measured(r.get(wl, pol, v)).ece()
		m = max(m, e)
		parts = append(parts, fmt.Sprintf("%s %.3f", pol, e))
	}
	if calls := r.shared(wl, v); calls != nil {
		parts = append(parts, fmt.Sprintf("(%s %.3f)", sharedName, r.measured(calls).ece()))
	}
	return eceSummary{strings.Join(parts, ", "), m}
}

// targetTable writes the targets, met or not.
func (r *report) targetTable(w io.Writer) {
	heading(w, "Targets", "As measured, on the measured calls, for each setting (reputation off is today's engine, which the targets do not bind; the simulated targets bind with 2% of outcomes reported):",
		"| workload | reputation | target | measured | |", "|---|---|---|---|---|")
	for _, t := range r.targets() {
		writeTarget(w, t)
	}
	fmt.Fprintln(w, "| all | off | identical to today's engine, bit for bit, on the same seed | checked by `go test -race ./examples/accuracy` (TestReputationOff_today) | see the test |")
}

// writeTarget writes a target's row, met or not.
func writeTarget(w io.Writer, t target) {
	met := "met"
	if !t.met {
		met = "**NOT met**"
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.workload, t.setting, t.what, t.measured, met)
}

// The targets of the delegation workloads on the real GSM8K answers.
const (
	targetDelegationLoss = 0.005 // adaptive at least as accurate as the plurality of 5 less this
	targetDelegationECE  = 0.03  // safe and adaptive
)

// targets returns the delegation targets as measured, for every aggregation
// and setting.
func (r *delegationReport) targets() []target {
	var ts []target
	for _, t := range r.tables {
		five := r.measured(r.plurality[t.spec.name])
		for _, agg := range aggregations {
			for _, st := range r.cfg.settings() {
				add := func(what, measured string, met bool) {
					ts = append(ts, target{workload: t.spec.name, setting: st.String(), what: string(agg) + ": " + what, measured: measured, met: met})
				}
				a := r.measured(r.get(t, agg, trust.PolicyAdaptive, st))
				add("adaptive at least as accurate as the plurality of 5 less 0.5 points",
					fmt.Sprintf("%s against %s (%+.2f points)", pct2(a.accuracy()), pct2(five.accuracy()), 100*(a.accuracy()-five.accuracy())),
					a.accuracy() >= five.accuracy()-targetDelegationLoss)
				add(fmt.Sprintf("adaptive at most %.1f runs per call", t.spec.runsTarget), fmt.Sprintf("%.3f", a.runsPerCall()), a.runsPerCall() <= t.spec.runsTarget)
				s := r.measured(r.get(t, agg, trust.PolicySafe, st))
				add(fmt.Sprintf("ECE at most %.2f for safe and adaptive", targetDelegationECE), fmt.Sprintf("safe %.3f, adaptive %.3f", s.ece(), a.ece()),
					max(s.ece(), a.ece()) <= targetDelegationECE)
			}
		}
	}
	return ts
}
