// Command accuracy measures what each trust tier buys: the accuracy of
// its statuses and the runs it spends, on a seeded simulation of workers
// of error rate 0.1, 0.2 and 0.3 judging a workload where 90% of the
// claims are easy, and of a second, easy workload where workers err on 2%
// of the easy claims. It runs the real trust.Service on a real
// router.Engine, in-process; only the workers are simulated.
//
//	go run ./examples/accuracy [-calls N] [-seed S] [-md FILE] [-svg FILE] [-sweep T,...] [-calibrated]
//
// It writes the tables in Markdown (to standard output, or FILE) and, with
// -svg, a chart of accuracy against runs spent. The same seed gives
// the same figures. docs/ACCURACY.md describes the worker model and reads
// the results.
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
	"strconv"
	"strings"
)

func main() {
	calls := flag.Int("calls", 20000, "claims judged by each tier at each error rate")
	seed := flag.Uint64("seed", 1, "seed of the workload and the workers")
	md := flag.String("md", "", "write the Markdown tables to this file (default: standard output)")
	svg := flag.String("svg", "", "write the chart to this SVG file")
	sweep := flag.String("sweep", "0.9,0.95,0.98", "other escalation thresholds (the confidence a lone run needs) to measure adaptive at, comma-separated")
	calibrated := flag.Bool("calibrated", false, "what-if: wrong answers report the low confidence of hard claims")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := config{calls: *calls, seed: *seed, rates: []float64{0.1, 0.2, 0.3, easyWorkload}, calibrated: *calibrated}
	if err := run(ctx, cfg, *sweep, *md, *svg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

// run simulates cfg with the thresholds of sweep, then writes the tables
// to mdPath (or out) and the chart to svgPath (if set); progress goes to
// progress.
func run(ctx context.Context, cfg config, sweep, mdPath, svgPath string, out, progress io.Writer) error {
	var err error
	if cfg.sweep, err = parseSweep(sweep); err != nil {
		return err
	}
	rep, err := simulate(ctx, cfg, progress)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	rep.markdown(&md)
	if mdPath == "" {
		_, err = out.Write(md.Bytes())
	} else {
		err = os.WriteFile(mdPath, md.Bytes(), 0o644)
	}
	if err != nil {
		return err
	}
	if svgPath == "" {
		return nil
	}
	var svg bytes.Buffer
	if err := rep.chart(&svg); err != nil {
		return fmt.Errorf("drawing the chart: %w", err)
	}
	return os.WriteFile(svgPath, svg.Bytes(), 0o644)
}

// parseSweep reads a comma-separated list of thresholds in [0, 1].
func parseSweep(s string) ([]float64, error) {
	var ts []float64
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		t, err := strconv.ParseFloat(f, 64)
		if err != nil || !(t >= 0 && t <= 1) {
			return nil, errors.New("-sweep: want thresholds between 0 and 1, got " + strconv.Quote(f))
		}
		ts = append(ts, t)
	}
	return ts, nil
}
