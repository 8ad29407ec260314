// Command load drives a vouch server with a bounded number of mixed calls
// from many concurrent clients, then checks what the server reports about
// itself:
//
//	go run ./examples/load [-url URL] [-debug-url URL] [-api-key KEY]
//	    [-calls N] [-concurrency N] [-mix validate_v2=3,...] [-duration D]
//
// Every call carries a unique id in metadata.call_id. The server's demo
// workers count their executions per id (examples/server -debug-addr), and
// the program compares those counts with what each answer says ran: one
// run for a version 2 call, one per replica for version 3, the replicas
// spent for a trust call. It also reads the server's goroutine count and
// heap before the load and after it, once the load has stopped.
//
// It prints a progress line while it runs and a summary table at the end,
// and exits with status 1 when a check fails: a call lost or run twice, an
// error other than a rate limit, or goroutines or heap still growing after
// the load. README.md describes the flags and the checks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal ends the load and the summary is printed; a
	// second one ends the program.
	context.AfterFunc(ctx, stop)
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	s, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	s.write(os.Stdout)
	if !s.passed() {
		os.Exit(1)
	}
}

// run sends the calls of cfg, then checks the server's counters. Progress
// lines go to progress. The error is for a load that could not be run at
// all; failed checks are in the summary.
func run(ctx context.Context, cfg config, progress io.Writer) (*summary, error) {
	l, err := newLoader(cfg)
	if err != nil {
		return nil, err
	}
	defer l.close()
	return l.run(ctx, progress)
}
