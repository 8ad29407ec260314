package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// shutdownGrace is how long requests in flight may take to finish once
// the server is told to stop.
const shutdownGrace = 10 * time.Second

// serve serves the API on ln, the debug variables on dln and /metrics on
// mln when they are not nil, and sweeps the state, until ctx ends or a
// listener fails; then it shuts the servers down gracefully and stops the
// sweeper.
func serve(ctx context.Context, log *slog.Logger, s *server, ln, dln, mln net.Listener) error {
	errLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	servers := []*http.Server{{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}}
	listeners := []net.Listener{ln}
	if dln != nil {
		servers = append(servers, &http.Server{Handler: s.debugHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog})
		listeners = append(listeners, dln)
	}
	if mln != nil {
		servers = append(servers, &http.Server{Handler: s.metricsHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog})
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
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
