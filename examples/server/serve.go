package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
)

// shutdownGrace is how long requests in flight may take to finish once
// the server is told to stop.
const shutdownGrace = 10 * time.Second

// serverTimeouts are the limits of an http.Server (its fields of the
// same names).
type serverTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// timeoutsFor returns the limits of a server whose longest route runs
// for at most longest (the engine's call timeout, which bounds every
// call, or a paid route's time budget): 10s for the headers and 30s for
// the whole request, a body of at most 1 MiB; longest plus a minute to
// write the answer, for the settlement that follows a paid call; and 2
// minutes for an idle keep-alive connection. A request whose body never
// arrives is closed once the read timeout passes.
func timeoutsFor(longest time.Duration) serverTimeouts {
	return serverTimeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: longest + time.Minute, idle: 2 * time.Minute}
}

// apiServer returns a server of h under the limits t.
func apiServer(h http.Handler, errLog *log.Logger, t serverTimeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read, WriteTimeout: t.write, IdleTimeout: t.idle, ErrorLog: errLog}
}

// serve serves the API on ln, the debug variables on dln and /metrics on
// mln when they are not nil, and sweeps the state, until ctx ends or a
// listener fails; then it shuts the servers down gracefully and stops the
// sweeper.
func serve(ctx context.Context, log *slog.Logger, s *server, ln, dln, mln net.Listener) error {
	errLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	limits := timeoutsFor(max(router.DefaultCallTimeout, x402.DefaultTimeBudget))
	servers := []*http.Server{apiServer(s.handler, errLog, limits)}
	listeners := []net.Listener{ln}
	if dln != nil {
		servers = append(servers, apiServer(s.debugHandler(), errLog, limits))
		listeners = append(listeners, dln)
	}
	if mln != nil {
		servers = append(servers, apiServer(s.metricsHandler(), errLog, limits))
		listeners = append(listeners, mln)
	}

	sweepCtx, stopSweep := context.WithCancel(context.WithoutCancel(ctx))
	var sweeping sync.WaitGroup
	sweeping.Go(func() { s.state.sweep(sweepCtx) })
	sweeping.Go(func() { s.finishEscrows(sweepCtx) })
	defer func() { stopSweep(); sweeping.Wait() }()

	served := make(chan error, len(servers))
	for i, hs := range servers {
		go func() { served <- hs.Serve(listeners[i]) }()
	}
	var err error
	remaining := len(servers)
	select {
	case err = <-served: // a listener failed: stop the others too
		remaining--
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	for _, hs := range servers {
		if serr := hs.Shutdown(sctx); serr != nil && err == nil {
			err = fmt.Errorf("shutdown: %w", serr)
		}
	}
	for range remaining {
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	if s.a2a != nil {
		s.a2a.Close() // the calls of returnImmediately, which outlive their requests
	}
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
