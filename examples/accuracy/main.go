// Command accuracy measures what each trust tier buys, before and after
// learned session reliability: the accuracy of its statuses with a 95%
// interval, the runs it spends and on which sessions, and how well its
// stated confidence is calibrated (ECE, Brier score, reliability charts).
// It runs the real trust.Service on a real router.Engine, in-process;
// only the workers are simulated.
//
// With -data, it first runs real-data validation workloads read from that
// folder (../shared/real-llm-data): real answers of language models to
// MMLU-Pro questions and real option probabilities on an emotion
// classification set, framed as validating a seller model's claimed
// answer by a panel of five models, the host reporting the true outcome
// of a share of the calls (-outcomes); and real-data delegation
// workloads, GSM8K problems delegated to a panel of five models that
// answer with their models' real numbers. Then it runs three seeded,
// simulated workloads: a heterogeneous panel of five sessions that err 6%
// to 25% of the time, an easy panel where every session errs 2% of the
// time, and correlated traps, claims on which the sessions err together.
//
//	go run ./examples/accuracy [-data DIR] [-warm 2000] [-delegation-warm 300] [-outcomes 0,0.02,0.05] [-draws D] [-calls N] [-seed S] [-episode E] [-curve 0,100,1000] [-only W,...] [-sweep T,...] [-md FILE] [-charts DIR]
//
// With -families it measures instead the world families: for each seed
// and panel, five models drawn from a family's eligible ones, on the real
// answers of -data (or, without -data, on the rows cut from them in
// testdata; a folder named but absent is an error), reported as the
// worst and the median world.
//
//	go run ./examples/accuracy -families all [-data DIR] [-seeds 1,2,3] [-panels 2] [-real-calls N] [-warm 2000] [-outcomes 0,0.02,0.05] [-selection-shift K] [-horizon H] [-lead-level L] [-lead-margin M] [-drift [-forget]] [-md FILE] [-charts DIR]
//
// -selection-shift measures the same worlds on another sequence of the
// engines' selection draws; -horizon sets the reputation books' horizon
// (reputation.Options.Horizon), -lead-level their lead level
// (reputation.Options.LeadLevel) and -lead-margin their lead margin
// (reputation.Options.LeadMargin); -drift swaps each validation world's best
// and worst sessions as measuring begins, so that reputation must follow
// a panel that changed, and -forget has the host forget those two
// sessions as they swap (reputation.Book.Forget).
//
// It writes the tables in Markdown (to standard output, or FILE), the
// targets met or not among them, and with -charts a reliability chart per
// workload (DIR/reliability-WORKLOAD.svg). The same seed gives the same
// figures. docs/ACCURACY.md describes the workloads and reads the
// results.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vouchkit/vouch/reputation"
)

func main() {
	calls := flag.Int("calls", 40000, "claims of each workload, judged by every tier")
	seed := flag.Uint64("seed", 1, "seed of the claims and the workers")
	episode := flag.Int("episode", 2000, "calls per engine: each episode starts from a fresh engine, and reputation from the neutral prior")
	curve := flag.String("curve", "0,100,1000", "the learning curve's points, earlier calls of an episode; the calls after the last are the measured ones")
	only := flag.String("only", "", "the workloads to run, comma-separated (default: all)")
	sweep := flag.String("sweep", "0.9,0.95", "other escalation thresholds (the confidence a lone run needs to settle an adaptive call) to measure adaptive at, comma-separated; empty for none")
	md := flag.String("md", "", "write the Markdown tables to this file (default: standard output)")
	charts := flag.String("charts", "", "write the reliability charts to this directory")
	data := flag.String("data", "", "the real-data folder (../shared/real-llm-data) whose workloads to run besides the simulated ones; empty for none")
	warm := flag.Int("warm", 2000, "the earlier calls of a real-data validation workload: the calls after them are the measured ones")
	delegationWarm := flag.Int("delegation-warm", 300, "the earlier calls of a real-data delegation workload (GSM8K: 1,319 problems): the calls after them are the measured ones")
	outcomes := flag.String("outcomes", "0,0.02,0.05", "the shares of the calls whose truth the host reports (trust.Service.FeedbackVerdict, or Feedback for a delegation) to measure reputation on at, comma-separated")
	draws := flag.Int("draws", 0, "other draws of the reported calls to measure each real-data validation cell with outcomes on, besides the seed's own (the claims and the workers unchanged)")
	fams := flag.String("families", "", "measure the world families instead, comma-separated (all: every family): "+familyNames())
	seeds := flag.String("seeds", "1,2,3", "with -families, the seeds of the worlds, comma-separated")
	panels := flag.Int("panels", 2, "with -families, the panels drawn per seed and family")
	shift := flag.Int("selection-shift", 0, "with -families, advance every engine's selection draws by this many calls before the first: the same worlds on another sequence of draws")
	leadLevel := flag.Float64("lead-level", 0, "with -families, the lead level of every reputation book, in (0, 1/2] (0: reputation.DefaultLeadLevel)")
	leadMargin := flag.Float64("lead-margin", 0, "with -families, the lead margin of every reputation book, in (0, 1] (0: reputation.DefaultLeadMargin; 1: records lead at the lead level alone)")
	horizon := flag.Float64("horizon", 0, "with -families, the horizon of every reputation book, in votes (0: reputation.DefaultHorizon)")
	forget := flag.Bool("forget", false, "with -drift, the host forgets the two sessions that swap as they swap (reputation.Book.Forget)")
	drift := flag.Bool("drift", false, "with -families, swap the answers of each validation world's best and worst sessions from its first measured call on: the panel changes, and reputation has to follow")
	realCalls := flag.Int("real-calls", 0, "a real-data workload's or world's calls at most, earlier and measured, the first in the seeded order (0: every row of the data)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := config{calls: *calls, seed: *seed, episode: *episode, data: *data, realWarm: *warm, delegationWarm: *delegationWarm, draws: *draws,
		panels: *panels, realCalls: *realCalls, shift: *shift, book: reputation.Options{Horizon: *horizon, LeadLevel: *leadLevel, LeadMargin: *leadMargin}, drift: *drift, forget: *forget}
	var err error
	if *fams != "" {
		if cfg.families, err = parseFamilies(*fams); err == nil {
			cfg.seeds, err = parseSeeds(*seeds)
		}
	}
	if err != nil {
	} else if cfg.curve, err = parseCurve(*curve); err == nil {
		cfg.only, err = parseOnly(*only)
	}
	if err == nil {
		cfg.sweep, err = parseSweep(*sweep)
	}
	if err == nil {
		cfg.outcomes, err = parseOutcomes(*outcomes)
	}
	if err == nil {
		err = run(ctx, cfg, *md, *charts, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

// run measures cfg's workloads, the real-data ones first, then writes
// the tables to mdPath (or out) and the charts to chartDir (if set);
// progress goes to progress.
func run(ctx context.Context, cfg config, mdPath, chartDir string, out, progress io.Writer) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.data != "" {
		// A folder named but absent is a mistake (a path from another
		// working directory, say), not a wish for the fixtures: those
		// run when -data is empty.
		fi, err := os.Stat(cfg.data)
		switch {
		case err != nil && len(cfg.families) > 0:
			return fmt.Errorf("-data: %w (leave -data out to run the world families on the committed fixtures)", err)
		case err != nil:
			return fmt.Errorf("-data: %w", err)
		case !fi.IsDir():
			return fmt.Errorf("-data: %s is not a folder", cfg.data)
		}
	}
	var md bytes.Buffer
	charts := map[string]func(io.Writer) error{}
	if len(cfg.families) > 0 {
		worlds, err := simulateWorlds(ctx, cfg, progress)
		if err != nil {
			return err
		}
		worlds.markdown(&md)
		for _, f := range worlds.order {
			charts["world-"+f.name] = func(w io.Writer) error { return worlds.chart(w, f) }
		}
	} else if cfg.runsReal() {
		real, err := simulateReal(ctx, cfg, progress)
		if err != nil {
			return err
		}
		real.markdown(&md)
		for _, t := range real.tables {
			charts[t.spec.name] = func(w io.Writer) error { return real.chart(w, t) }
		}
	}
	if len(cfg.families) == 0 && cfg.runsDelegation() {
		del, err := simulateDelegation(ctx, cfg, progress)
		if err != nil {
			return err
		}
		if md.Len() > 0 {
			fmt.Fprintln(&md)
		}
		del.markdown(&md)
	}
	if len(cfg.families) == 0 && cfg.runsSimulated() {
		rep, err := simulate(ctx, cfg, progress)
		if err != nil {
			return err
		}
		if md.Len() > 0 {
			fmt.Fprintln(&md)
		}
		rep.markdown(&md)
		for _, wl := range rep.measuredWorkloads() {
			charts[wl.name] = func(w io.Writer) error { return rep.chart(w, wl) }
		}
	}
	var err error
	if mdPath == "" {
		_, err = out.Write(md.Bytes())
	} else {
		err = os.WriteFile(mdPath, md.Bytes(), 0o644)
	}
	if err != nil || chartDir == "" {
		return err
	}
	for name, draw := range charts {
		var svg bytes.Buffer
		if err := draw(&svg); err != nil {
			return fmt.Errorf("drawing the chart of %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(chartDir, "reliability-"+name+".svg"), svg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// check reports a configuration that names a real-data workload without
// a folder to read it from.
func (c config) check() error {
	for _, o := range c.only {
		if c.data == "" && (slices.ContainsFunc(panelSpecs, func(p panelSpec) bool { return p.name == o }) ||
			slices.ContainsFunc(delegationSpecs, func(d delegationSpec) bool { return d.name == o })) {
			return fmt.Errorf("-only: %s is a real-data workload: give the folder with -data", o)
		}
	}
	switch {
	case c.data != "" && c.realWarm < 0:
		return fmt.Errorf("-warm must be at least 0, got %d", c.realWarm)
	case c.data != "" && c.delegationWarm < 0:
		return fmt.Errorf("-delegation-warm must be at least 0, got %d", c.delegationWarm)
	case len(c.families) > 0 && (c.panels < 1 || len(c.seeds) == 0 || c.realWarm < 0):
		return fmt.Errorf("-families: want -panels at least 1, a seed, and -warm at least 0; got -panels %d, -seeds %v, -warm %d", c.panels, c.seeds, c.realWarm)
	case c.realCalls < 0:
		return fmt.Errorf("-real-calls must be at least 0, got %d", c.realCalls)
	case c.draws < 0:
		return fmt.Errorf("-draws must be at least 0, got %d", c.draws)
	case c.draws > 0 && c.data == "":
		return fmt.Errorf("-draws: other draws are measured on the real-data validation workloads: give the folder with -data")
	case c.shift < 0:
		return fmt.Errorf("-selection-shift must be at least 0, got %d", c.shift)
	case c.shift > 0 && len(c.families) == 0:
		return fmt.Errorf("-selection-shift: the selection draws are shifted on the world families: give them with -families")
	case !(c.book.Horizon >= 0 && c.book.Horizon <= reputation.MaxCount):
		return fmt.Errorf("-horizon must be a number from 0 to %g, got %v", reputation.MaxCount, c.book.Horizon)
	case c.book.Horizon > 0 && len(c.families) == 0:
		return fmt.Errorf("-horizon: the horizon is set on the world families: give them with -families")
	case !(c.book.LeadLevel >= 0 && c.book.LeadLevel <= reputation.MaxLeadLevel):
		return fmt.Errorf("-lead-level must be a number from 0 to 1/2 (reputation.MaxLeadLevel), got %v", c.book.LeadLevel)
	case c.book.LeadLevel > 0 && len(c.families) == 0:
		return fmt.Errorf("-lead-level: the lead level is set on the world families: give them with -families")
	case !(c.book.LeadMargin >= 0 && c.book.LeadMargin <= 1):
		return fmt.Errorf("-lead-margin must be a number from 0 to 1, got %v", c.book.LeadMargin)
	case c.book.LeadMargin > 0 && len(c.families) == 0:
		return fmt.Errorf("-lead-margin: the lead margin is set on the world families: give them with -families")
	case c.drift && len(c.families) == 0:
		return fmt.Errorf("-drift: the world families drift: give them with -families")
	case c.forget && !c.drift:
		return fmt.Errorf("-forget: the host forgets the sessions that drift swaps: give -drift")
	}
	return nil
}

// runsDelegation reports whether some real-data delegation workload is
// to run.
func (c config) runsDelegation() bool {
	return c.data != "" && slices.ContainsFunc(delegationSpecs, func(d delegationSpec) bool { return c.includes(d.name) })
}

// runsReal reports whether some real-data workload is to run.
func (c config) runsReal() bool {
	return c.data != "" && slices.ContainsFunc(panelSpecs, func(p panelSpec) bool { return c.includes(p.name) })
}

// runsSimulated reports whether some simulated workload is to run.
func (c config) runsSimulated() bool {
	return slices.ContainsFunc(workloads, func(w workload) bool { return c.includes(w.name) })
}

// parseCurve reads the learning curve's points: a comma-separated,
// strictly increasing list of counts of earlier calls, from 0.
func parseCurve(s string) ([]int, error) {
	var pts []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || (len(pts) > 0 && n <= pts[len(pts)-1]) || (len(pts) == 0 && n != 0) {
			return nil, errors.New("-curve: want increasing counts of earlier calls from 0, such as 0,100,1000; got " + strconv.Quote(s))
		}
		pts = append(pts, n)
	}
	return pts, nil
}

// parseOnly reads a comma-separated list of workload names.
func parseOnly(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var names []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.ContainsFunc(workloads, func(w workload) bool { return w.name == f }) &&
			!slices.ContainsFunc(panelSpecs, func(p panelSpec) bool { return p.name == f }) &&
			!slices.ContainsFunc(delegationSpecs, func(d delegationSpec) bool { return d.name == f }) {
			return nil, fmt.Errorf("-only: no workload %q; the workloads are %s", f, workloadNames())
		}
		names = append(names, f)
	}
	return names, nil
}

// parseSweep reads a comma-separated list of thresholds in (0, 1].
func parseSweep(s string) ([]float64, error) {
	var ts []float64
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		t, err := strconv.ParseFloat(f, 64)
		if err != nil || !(t > 0 && t <= 1) {
			return nil, errors.New("-sweep: want thresholds above 0 and at most 1, got " + strconv.Quote(f))
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// parseOutcomes reads a comma-separated list of shares in [0, 1).
func parseOutcomes(s string) ([]float64, error) {
	var shares []float64
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		o, err := strconv.ParseFloat(f, 64)
		if err != nil || !(o >= 0 && o < 1) || slices.Contains(shares, o) {
			return nil, errors.New("-outcomes: want distinct shares of at least 0 and below 1, such as 0,0.02,0.05; got " + strconv.Quote(s))
		}
		shares = append(shares, o)
	}
	return shares, nil
}

// parseSeeds reads a comma-separated list of distinct seeds.
func parseSeeds(s string) ([]uint64, error) {
	var seeds []uint64
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || slices.Contains(seeds, n) {
			return nil, errors.New("-seeds: want distinct seeds, such as 1,2,3; got " + strconv.Quote(s))
		}
		seeds = append(seeds, n)
	}
	return seeds, nil
}
