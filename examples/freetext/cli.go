package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(cli(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Flags that apply to one mode only: the seeded workload, or a real
// model's pairs (-pairs).
var (
	workloadOnly = []string{"calls", "seed", "judge-errors", "md"}
	pairsOnly    = []string{"embed-url", "embed-model"}
)

// cli reads the command line and runs, returning the exit status: 2 for
// a usage error, 1 for a run that failed or a table that says the model
// or the guard failed.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("freetext", flag.ContinueOnError)
	fs.SetOutput(stderr)
	calls := fs.Int("calls", 2000, "questions, each delegated once by every way and tier")
	seed := fs.Uint64("seed", 1, "seed of the questions, answers and judgements")
	judgeErrors := fs.String("judge-errors", "0,0.05", "the judges' error rates to measure judged delegation at, comma-separated")
	thresholds := fs.String("thresholds", "0.9,0.97", "the similarity thresholds to measure the embeddings at, comma-separated")
	md := fs.String("md", "", "write the Markdown table to this file (default: standard output)")
	pairsFile := fs.String("pairs", "", "measure a real embedding model on this pairs file instead (needs -embed-url)")
	embedURL := fs.String("embed-url", "", "with -pairs: the embeddings endpoint's API root, such as http://127.0.0.1:8090/v1")
	embedModel := fs.String("embed-model", "all-MiniLM-L6-v2", "with -pairs: the embedding model's name")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./examples/freetext [-calls N] [-seed S] [-judge-errors LIST] [-thresholds LIST] [-md FILE]")
		fmt.Fprintln(stderr, "       go run ./examples/freetext -pairs FILE -embed-url URL [-embed-model NAME] [-thresholds LIST]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "freetext: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q: it takes flags only", fs.Arg(0))
	}
	pairs := *pairsFile != ""
	var misplaced string
	fs.Visit(func(f *flag.Flag) {
		if misplaced == "" && (pairs && slices.Contains(workloadOnly, f.Name) || !pairs && slices.Contains(pairsOnly, f.Name)) {
			misplaced = f.Name
		}
	})
	switch {
	case misplaced != "" && pairs:
		return usage("-%s applies to the seeded workload, not to -pairs", misplaced)
	case misplaced != "":
		return usage("-%s applies only with -pairs", misplaced)
	case pairs && *embedURL == "":
		return usage("-pairs needs -embed-url")
	case *calls < 1:
		return usage("-calls %d: want at least 1", *calls)
	}
	cfg := config{calls: *calls, seed: *seed}
	var err error
	if cfg.judgeErrors, err = parseRates("-judge-errors", *judgeErrors, 0); err == nil {
		cfg.thresholds, err = parseRates("-thresholds", *thresholds, 1e-9)
	}
	if err != nil {
		return usage("%v", err)
	}

	if pairs {
		err = measurePairs(ctx, stdout, *pairsFile, *embedURL, *embedModel, cfg.thresholds)
	} else {
		err = measureWorkload(ctx, cfg, stdout, *md)
	}
	if err != nil {
		fmt.Fprintln(stderr, "freetext:", err)
		return 1
	}
	return 0
}

// measureWorkload measures the seeded workload and writes its table to
// out, or to the file md when it is not empty.
func measureWorkload(ctx context.Context, cfg config, out io.Writer, md string) error {
	var f *os.File
	if md != "" {
		var err error
		if f, err = os.Create(md); err != nil {
			return fmt.Errorf("-md: %w", err)
		}
		defer f.Close()
		out = f
	}
	rows, err := run(ctx, cfg)
	if err != nil {
		return err
	}
	// A buffer keeps the first write error for Flush to report.
	bw := bufio.NewWriter(out)
	writeTable(bw, cfg, rows)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	if f != nil {
		return f.Close()
	}
	return nil
}
