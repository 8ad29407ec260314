package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/trust"
)

// The targets of the world families, each measured on every world.
const (
	targetWorldECE      = 0.03  // fast, safe and adaptive at the binding share of outcomes
	targetNumericECE0   = 0.05  // a delegation's tiers with no outcome reported
	targetNoOutcomeAcc  = 0.005 // with no outcome, safe and adaptive at most this below reputation off
	targetNoOutcomeECE  = 0.01  // with no outcome, safe and adaptive ECE at most this above reputation off
	targetNumericLoss   = 0.005 // a delegation's adaptive at most this below the plurality of 5
	bindingOutcomeShare = 0.05  // the share of outcomes reported the targets bind at
)

// A worldTarget is one target measured on one world: its figure, as
// written, and its margin, at least 0 when met (in the figure's units,
// signed so that larger is better).
type worldTarget struct {
	what   string
	figure float64
	text   string // the figure with its units
	margin float64
}

// binding returns the setting the targets bind at: the share of
// outcomes bindingOutcomeShare if measured, else the largest measured.
func (c config) binding() setting {
	ss := c.settings()
	for _, st := range ss {
		if st.rep == on && st.outcomes == bindingOutcomeShare {
			return st
		}
	}
	largest := ss[len(ss)-1]
	for _, st := range ss {
		if st.rep == on && st.outcomes > largest.outcomes {
			largest = st
		}
	}
	return largest
}

// none returns the setting of reputation on with no outcome reported,
// and whether it was measured.
func (c config) none() (setting, bool) {
	st := setting{rep: on}
	return st, slices.Contains(c.settings(), st)
}

// targets returns the world's targets as measured.
func (r *worldResult) targets(cfg config) []worldTarget {
	f := r.w.fam
	bind := cfg.binding()
	a := r.cells[worldCell{trust.PolicyAdaptive, bind}]
	pts := func(x float64) string { return fmt.Sprintf("%+.2f points", 100*x) }
	var ts []worldTarget
	if f.delegates() {
		d := a.accuracy() - r.five.accuracy()
		ts = append(ts, worldTarget{"adaptive at least the plurality of 5 − 0.5 point", d, pts(d), d + targetNumericLoss})
	} else {
		ref := max(r.best.accuracy(), r.five.accuracy())
		d := a.accuracy() - ref
		ts = append(ts, worldTarget{"adaptive at least as accurate as the better of the best single session and the majority of 5", d, pts(d), d})
	}
	ts = append(ts, worldTarget{fmt.Sprintf("adaptive at most %.2f runs per call", f.runsTarget), a.runsPerCall(), fmt.Sprintf("%.2f runs", a.runsPerCall()), f.runsTarget - a.runsPerCall()})
	ts = append(ts, r.eceTarget(bind, targetWorldECE, fmt.Sprintf("ECE at most %.2f (or a calibrated tier's) for fast, safe and adaptive", targetWorldECE)))
	none, ok := cfg.none()
	if !ok {
		return ts
	}
	if f.delegates() {
		ts = append(ts, r.eceTarget(none, targetNumericECE0, fmt.Sprintf("with no outcome, ECE at most %.2f (or a calibrated tier's)", targetNumericECE0)))
	}
	accD, eceD := 1.0, -1.0
	for _, pol := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
		on, off := r.cells[worldCell{pol, none}], r.cells[worldCell{pol, setting{rep: off}}]
		accD = min(accD, on.accuracy()-off.accuracy())
		eceD = max(eceD, on.ece()-off.ece())
	}
	ts = append(ts,
		worldTarget{"with no outcome, safe and adaptive at most 0.5 point less accurate than reputation off", accD, pts(accD), accD + targetNoOutcomeAcc},
		worldTarget{"with no outcome, safe and adaptive ECE at most 0.01 above reputation off", eceD, fmt.Sprintf("%+.3f", eceD), targetNoOutcomeECE - eceD})
	return ts
}

// eceTarget is the target that fast, safe and adaptive state a
// calibrated confidence at st: ECE at most bound, or on a world too
// small to certify it, at most what a perfectly calibrated tier would
// show on the same calls. Its figure is the worst tier's ECE.
func (r *worldResult) eceTarget(st setting, bound float64, what string) worldTarget {
	t := worldTarget{what: what, margin: 1}
	for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
		c := worldCell{pol, st}
		e := r.cells[c].ece()
		if m := max(bound, r.floors[c]) - e; m < t.margin {
			t.figure, t.margin = e, m
			t.text = fmt.Sprintf("%.3f (%s; bound %.3f)", e, pol, max(bound, r.floors[c]))
		}
	}
	return t
}

// familyTarget is a target over a family's worlds: the figure of the
// world that meets it least, the median figure, and how many worlds met
// it.
type familyTarget struct {
	what          string
	worst, median string
	met, worlds   int
}

// familyTargets returns the family's targets over its worlds, in the
// order of worldResult.targets.
func (r *worldsReport) familyTargets(f *family) []familyTarget {
	rs := r.results[f.name]
	var out []familyTarget
	for k := range rs[0].targets(r.cfg) {
		var ws []worldTarget
		for _, wr := range rs {
			ws = append(ws, wr.targets(r.cfg)[k])
		}
		worst := slices.MinFunc(ws, func(a, b worldTarget) int { return cmpFloat(a.margin, b.margin) })
		figs := make(spread, len(ws))
		ft := familyTarget{what: ws[0].what, worst: worst.text, worlds: len(ws)}
		for i, w := range ws {
			figs[i] = w.figure
			if metMargin(w.margin) {
				ft.met++
			}
		}
		ft.median = formatLike(worst.text, figs.median())
		out = append(out, ft)
	}
	return out
}

// marginTol absorbs the rounding of a difference of two shares, so that
// a figure exactly at its target's margin meets it.
const marginTol = 1e-12

// metMargin reports whether a target's margin is met.
func metMargin(m float64) bool { return m >= -marginTol }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// formatLike writes x in the units of a figure's text, with a sign when
// the text has one.
func formatLike(text string, x float64) string {
	switch {
	case strings.HasSuffix(text, "points"):
		return fmt.Sprintf("%+.2f points", 100*x)
	case strings.HasSuffix(text, "runs"):
		return fmt.Sprintf("%.2f runs", x)
	case strings.HasPrefix(text, "+") || strings.HasPrefix(text, "-"):
		return fmt.Sprintf("%+.3f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

// command returns the command line that reproduces the report.
func (r *worldsReport) command() string {
	cfg := r.cfg
	names := make([]string, len(r.order))
	for i, f := range r.order {
		names[i] = f.name
	}
	seeds := make([]string, len(cfg.seeds))
	for i, s := range cfg.seeds {
		seeds[i] = fmt.Sprint(s)
	}
	s := "go run ./examples/accuracy"
	if cfg.data != "" {
		s += " -data " + cfg.data
	}
	s += fmt.Sprintf(" -families %s -seeds %s -panels %d -warm %d -outcomes %s", strings.Join(names, ","), strings.Join(seeds, ","), cfg.panels, cfg.realWarm, joinFloats(cfg.outcomes))
	if cfg.realCalls > 0 {
		s += fmt.Sprintf(" -real-calls %d", cfg.realCalls)
	}
	if cfg.shift != 0 {
		s += fmt.Sprintf(" -selection-shift %d", cfg.shift)
	}
	if cfg.book.Horizon != 0 {
		s += fmt.Sprintf(" -horizon %g", cfg.book.Horizon)
	}
	if cfg.book.LeadLevel != 0 {
		s += fmt.Sprintf(" -lead-level %g", cfg.book.LeadLevel)
	}
	if cfg.book.LeadMargin != 0 {
		s += fmt.Sprintf(" -lead-margin %g", cfg.book.LeadMargin)
	}
	if cfg.drift {
		s += " -drift"
	}
	if cfg.forget {
		s += " -forget"
	}
	return s
}

// markdown writes the lead table of targets, then a section per family.
func (r *worldsReport) markdown(w io.Writer) {
	fmt.Fprintf(w, "Generated by `%s`, which took %s on %d cores (GOMAXPROCS).\n", r.command(), r.elapsed.Round(time.Second), runtime.GOMAXPROCS(0))
	if r.fixtures {
		fmt.Fprintln(w, "\n**No real-data folder: these figures come from the committed fixtures, a few dozen rows of each file, and say nothing of accuracy.**")
	}
	fmt.Fprintf(w, "\n### Targets\n\nEach target on every world of each family, with reputation on and %g%% of outcomes reported unless it says otherwise: the figure of the world that meets it least (worst), the median over the worlds, and on how many worlds it is met. A family meets a target only when every world does.\n\n", 100*r.cfg.binding().outcomes)
	fmt.Fprintln(w, "| family | target | worst | median | met on | |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|")
	for _, f := range r.order {
		for _, t := range r.familyTargets(f) {
			met := "met"
			if t.met < t.worlds {
				met = "**missed**"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d of %d | %s |\n", f.name, t.what, t.worst, t.median, t.met, t.worlds, met)
		}
		oc := r.overConfidence(f, worldCell{trust.PolicyAdaptive, r.cfg.binding()})
		if len(oc) > 0 {
			fmt.Fprintf(w, "| %s | what votes cannot see: adaptive's over-confidence on the calls the panel's majority got wrong | %+.1f points | %+.1f points | | reported |\n", f.name, 100*slices.Max(oc), 100*oc.median())
		}
		if worst, median, ok := r.outcomeGap(f); ok {
			fmt.Fprintf(w, "| %s | what the outcomes showed: the reported calls' share right less the measured calls', the largest gap of fast, safe and adaptive | %s | %.1f points | | reported |\n", f.name, worst, median)
		}
		for _, h := range []bool{false, true} {
			if what, worst, median, met, n, ok := r.reportsTold(f, h); ok {
				fmt.Fprintf(w, "| %s | %s | %s | %s | %d of %d | reported |\n", f.name, what, worst, median, met, n)
			}
		}
		if worst, median, ok := r.retried(f); ok {
			fmt.Fprintf(w, "| %s | adaptive's RETRY: share of the calls, and how often the answer it carried was right | %s | %s | | reported |\n", f.name, worst, median)
		}
	}
	for _, f := range r.order {
		r.familyTables(w, f)
	}
}

// familyTables writes a family's tables: every tier at every setting,
// worst and median over the worlds; the references; each world; and the
// calls the panel's majority got wrong.
func (r *worldsReport) familyTables(w io.Writer, f *family) {
	rs := r.results[f.name]
	five := "majority of 5"
	if f.delegates() {
		five = "plurality of 5"
	}
	fmt.Fprintf(w, "\n### %s: %s\n\n", f.name, f.title)
	fmt.Fprintf(w, "%d worlds (seeds × panels), each of %d calls: %d earlier, then %d measured.\n\n", len(rs), rs[0].w.n, rs[0].w.warm, rs[0].w.n-rs[0].w.warm)
	fmt.Fprintln(w, "| tier | reputation | accuracy, worst | median | runs per call, worst | median | ECE, worst | median | a calibrated tier's ECE (median) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	over := func(get func(*worldResult) float64) spread {
		s := make(spread, len(rs))
		for i, wr := range rs {
			s[i] = get(wr)
		}
		return s
	}
	for _, pol := range tiers {
		for _, st := range r.cfg.settings() {
			c := worldCell{pol, st}
			acc := over(func(wr *worldResult) float64 { return wr.cells[c].accuracy() })
			runs := over(func(wr *worldResult) float64 { return wr.cells[c].runsPerCall() })
			ece := over(func(wr *worldResult) float64 { return wr.cells[c].ece() })
			floor := over(func(wr *worldResult) float64 { return wr.floors[c] })
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f | %.2f | %.3f | %.3f | %.3f |\n", pol, st, pct(slices.Min(acc)), pct(acc.median()),
				slices.Max(runs), runs.median(), slices.Max(ece), ece.median(), floor.median())
		}
	}
	best := over(func(wr *worldResult) float64 { return wr.best.accuracy() })
	maj := over(func(wr *worldResult) float64 { return wr.five.accuracy() })
	fmt.Fprintf(w, "| best single session (reference) | — | %s | %s | 1.00 | 1.00 | | | |\n", pct(slices.Min(best)), pct(best.median()))
	fmt.Fprintf(w, "| %s (reference) | — | %s | %s | 5.00 | 5.00 | | | |\n", five, pct(slices.Min(maj)), pct(maj.median()))

	if !f.delegates() {
		dis := over(func(wr *worldResult) float64 { return ratio(wr.against.disagreed, wr.against.calls) })
		won := over(func(wr *worldResult) float64 { return ratio(wr.against.won, wr.against.disagreed) })
		fmt.Fprintf(w, "\nThe best single session against the strict majority of the other four, on every call, as a lead is scored had all five run: it disagrees on %s of the calls and is right on %s of those disagreements (median world; %s to %s and %s to %s over the worlds). A lead takes such reported disagreements won %s.\n",
			pct(dis.median()), pct(won.median()), pct(slices.Min(dis)), pct(slices.Max(dis)), pct(slices.Min(won)), pct(slices.Max(won)), r.cfg.leads())
		r.twoWays(w, rs, over)
	}

	bind := r.cfg.binding()
	fmt.Fprintf(w, "\nEach world (adaptive with reputation on; its best single session in bold among the panel's models):\n\n")
	fmt.Fprintf(w, "| seed | panel | models, sessions 1–5 | best single | %s | adaptive, no outcome | adaptive, %g%% outcomes | its runs per call |\n", five, 100*bind.outcomes)
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|")
	none, measured := r.cfg.none()
	for _, wr := range rs {
		ms := make([]string, panelSize)
		for i, m := range wr.w.models {
			m = strings.ReplaceAll(m[strings.LastIndex(m, ":")+1:], "|", `\|`) // JudgeBench's kind:judge, LLMBar's judge|strategy, in a table cell
			ms[i] = m
			if wr.w.models[i] == wr.bestModel {
				ms[i] = "**" + m + "**"
			}
		}
		a := wr.cells[worldCell{trust.PolicyAdaptive, bind}]
		alone := "not run" // -outcomes without 0
		if measured {
			alone = pct(wr.cells[worldCell{trust.PolicyAdaptive, none}].accuracy())
		}
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %.2f |\n", wr.w.seed, wr.w.panel, strings.Join(ms, ", "), pct(wr.best.accuracy()), pct(wr.five.accuracy()),
			alone, pct(a.accuracy()), a.runsPerCall())
	}

	r.endings(w, f)

	fmt.Fprintf(w, "\nWhat votes cannot see: on the measured calls the %s got wrong (median %s of the calls), the mean confidence each tier stated when it answered, against how often it was right (median over the worlds; over-confidence in points, worst and median):\n\n", five,
		pct(over(func(wr *worldResult) float64 {
			return ratio(wr.together[worldCell{trust.PolicyAdaptive, bind}].calls, wr.five.calls)
		}).median()))
	fmt.Fprintln(w, "| tier | reputation | stated | right | over-confidence, worst | median |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	for _, pol := range tiers {
		for _, st := range []setting{{rep: off}, none, bind} {
			c := worldCell{pol, st}
			var stated, right spread // over the worlds where the tier answered some of those calls
			for _, wr := range rs {
				if s := wr.together[c]; s.answered > 0 {
					stated, right = append(stated, s.meanStated()), append(right, s.answeredRight())
				}
			}
			oc := r.overConfidence(f, c)
			if len(oc) == 0 {
				fmt.Fprintf(w, "| %s | %s | — | — | — | — |\n", pol, st)
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %.3f | %s | %+.1f | %+.1f |\n", pol, st, stated.median(), pct(right.median()), 100*slices.Max(oc), 100*oc.median())
		}
	}
}

// overConfidence returns, for each world of f where c answered some of
// the calls the panel's majority got wrong, the confidence c stated on
// them less how often it was right.
func (r *worldsReport) overConfidence(f *family, c worldCell) spread {
	var oc spread
	for _, wr := range r.results[f.name] {
		if s := wr.together[c]; s.answered > 0 {
			oc = append(oc, s.meanStated()-s.answeredRight())
		}
	}
	return oc
}

// chart draws a family's reliability chart: a panel per setting, a line
// per tier over the measured calls of every world of the family pooled.
func (r *worldsReport) chart(w io.Writer, f *family) error {
	var panels []chartPanel
	for _, st := range r.cfg.settings() {
		cp := chartPanel{title: fmt.Sprintf("%s: reputation %s", f.name, st)}
		for i, pol := range tiers {
			var s stats
			for _, wr := range r.results[f.name] {
				s.add(wr.cells[worldCell{pol, st}])
			}
			cp.series = append(cp.series, series{string(pol), i, s})
		}
		panels = append(panels, cp)
	}
	return reliabilityChart(w, panels)
}

// outcomeGap returns, over f's worlds at the binding setting, the
// largest gap of fast, safe and adaptive between the share right of the
// answered calls whose outcome the host reported (what a calibration map
// learns from) and that of the answered measured calls: the worst
// world's, with its tier, and the median in points; false when no
// outcome was reported. A tier's ECE is at least its mean stated
// confidence less its share right, and a map states about what its
// outcomes showed.
func (r *worldsReport) outcomeGap(f *family) (worst string, median float64, ok bool) {
	var gaps spread
	worstGap := -1.0
	for _, wr := range r.results[f.name] {
		g, at := -1.0, trust.Policy("")
		for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
			c := worldCell{pol, r.cfg.binding()}
			o := wr.outcomes[c]
			if o.answered == 0 {
				continue
			}
			if d := o.answeredRight() - wr.cells[c].answeredRight(); math.Abs(d) > math.Abs(g) || at == "" {
				g, at = d, pol
			}
		}
		if at == "" {
			continue
		}
		gaps = append(gaps, g)
		if math.Abs(g) > worstGap {
			worstGap, worst = math.Abs(g), fmt.Sprintf("%+.1f points (%s)", 100*g, at)
		}
	}
	if len(gaps) == 0 {
		return "", 0, false
	}
	for i := range gaps {
		gaps[i] = math.Abs(gaps[i])
	}
	return worst, 100 * gaps.median(), true
}

// retried returns, over the worlds of a delegating family f, adaptive's
// RETRY answers on the measured calls at the binding setting: the world
// with the most, and the median, each as the share of the calls and how
// often the best-effort answer a RETRY carries was right; false for a
// family that does not delegate.
func (r *worldsReport) retried(f *family) (worst, median string, ok bool) {
	if !f.delegates() {
		return "", "", false
	}
	c := worldCell{trust.PolicyAdaptive, r.cfg.binding()}
	var shares, rights spread
	most := -1.0
	for _, wr := range r.results[f.name] {
		rt := wr.retries[c]
		share, right := ratio(rt.calls, wr.cells[c].calls), ratio(rt.right, rt.calls)
		shares = append(shares, share)
		if rt.calls > 0 { // a world with no RETRY has no share right
			rights = append(rights, right)
		}
		if share > most {
			most, worst = share, fmt.Sprintf("%s of the calls, %s right", pct(share), pct(right))
			if rt.calls == 0 {
				worst = pct(share) + " of the calls, no RETRY"
			}
		}
	}
	med := "no RETRY"
	if len(rights) > 0 {
		med = pct(rights.median()) + " right"
	}
	return worst, fmt.Sprintf("%s of the calls, %s", pct(shares.median()), med), true
}

// leads names the shortest records that lead under c's books, whose
// options reputation.New fills in: those shortestLeads names at the lead
// level, and, unless the margin is off (1) or the level already 1/2,
// those of a session its margin sets apart. Options a book refuses, which
// config.check turns away before any world runs, are named as such.
func (c config) leads() string {
	b, err := reputation.New(nil, c.book)
	if err != nil {
		return fmt.Sprintf("none: no book takes these options (%v)", err)
	}
	o := b.Options()
	s := shortestLeads(o.LeadLevel, 1)
	if o.LeadMargin < 1 && o.LeadLevel < reputation.MaxLeadLevel {
		s += fmt.Sprintf("; a session %g or more above every other, %s", o.LeadMargin, shortestLeads(reputation.MaxLeadLevel, reputation.MarginWins))
	}
	return s
}

// shortestLeads names the shortest records of minWon wins at least that
// pass the lead's sign test (reputation.Lead.PValue) at level with no
// loss, one and two: "three in three, five in six or seven in nine" at
// 1/8.
func shortestLeads(level float64, minWon int) string {
	var records [3]string
	for lost := range records {
		won := minWon
		for (reputation.Lead{Won: float64(won), Lost: float64(lost)}).PValue() > level {
			won++
		}
		records[lost] = countWord(won) + " in " + countWord(won+lost)
	}
	return records[0] + ", " + records[1] + " or " + records[2]
}

// countWord spells n in words up to twenty, in digits above.
func countWord(n int) string {
	words := [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
