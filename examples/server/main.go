// Command server serves the vouch router endpoints and the trust service,
// with its receipt endpoints, from one in-process engine: on deterministic
// demo workers, or on a panel of chat models (-workers FILE). The x402
// pay-per-call routes are paid through an offline facilitator.
//
//	go run ./examples/server [-addr HOST:PORT] [-api-key KEY] [-workers FILE]
//	    [-signing-key FILE] [-receipts FILE | -database-url URL] [-debug-addr HOST:PORT] ...
//
// The environment variables VOUCH_API_KEY, VOUCH_INTEGRATIONS and
// VOUCH_DATABASE_URL stand for -api-key, -integration and -database-url
// when those are not given, so that secrets need not be on the command
// line, which every local user can read.
//
// It prints its address, API key, curls to paste, the receipts' public key
// and the x402 prices, logs each request, and shuts down gracefully on
// SIGINT or SIGTERM. README.md describes the flags, the sessions, the
// workers' rules and the routes.
//
// Its HTTP servers close a connection whose request headers take over
// 10s, or whose whole request over 30s, to arrive (a body announced and
// never sent is not held open); give an answer the longest time budget
// of a route (the engine's call timeout, 2 minutes) plus a minute, for
// the settlement of a paid call; and close keep-alive connections idle
// for 2 minutes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts down gracefully. getenv reads the
// environment variables that stand for flags. The banner goes to stdout;
// the usage and the request log go to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := newServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer srv.state.close()
	defer srv.obs.close()
	if cfg.mcpStdio {
		return serveStdio(ctx, srv, log, os.Stdin, stdout)
	}
	ln, err := listen("-addr", cfg.addr)
	if err != nil {
		return err
	}
	var dln net.Listener
	debugBase := ""
	if cfg.debugAddr != "" {
		if dln, err = listen("-debug-addr", cfg.debugAddr); err != nil {
			ln.Close()
			return err
		}
		debugBase = "http://" + dln.Addr().String()
	}
	mln, err := listenMetrics(&cfg)
	if err != nil {
		ln.Close()
		if dln != nil {
			dln.Close()
		}
		return err
	}
	printBanner(stdout, "http://"+ln.Addr().String(), debugBase, cfg, srv)
	return serve(ctx, log, srv, ln, dln, mln)
}

// listen listens on the address of the flag name. Its error names the flag
// and, when another process holds the address, how to choose another.
func listen(name, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s: %w (another process listens there: stop it, or give %s another port, or port 0 for a free one)", name, err, name)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ln, nil
}
