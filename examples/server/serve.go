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
// sweeper. The requests still running once the grace has passed are
// cancelled, which their clients see as a 503, and serve returns once
// they have been answered (within cancelWait), so that the state is never
// closed under a request that still writes to it.
func serve(ctx context.Context, log *slog.Logger, s *server, ln, dln, mln net.Listener) error {
	errLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	limits := timeoutsFor(max(router.DefaultCallTimeout, x402.DefaultTimeBudget))
	// Every request's context, cancelled once the grace has passed.
	calls, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	base := func(net.Listener) context.Context { return calls }
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
	for _, hs := range servers {
		hs.BaseContext = base
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
	log.Info("shutting down", "grace", s.grace)
	serr := shutdown(ctx, servers, s.grace)
	if errors.Is(serr, context.DeadlineExceeded) {
		log.Warn("cancelling the requests still running", "grace", s.grace)
		cancelCalls()
		if serr = shutdown(ctx, servers, cancelWait); errors.Is(serr, context.DeadlineExceeded) {
			serr = fmt.Errorf("the requests cancelled did not end within %s", cancelWait)
			for _, hs := range servers {
				_ = hs.Close() // their connections end, at least
			}
		}
	}
	if serr != nil && err == nil {
		err = fmt.Errorf("shutdown: %w", serr)
	}
	for range remaining {
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	if s.a2a != nil {
		s.a2a.Close() // the calls made after answering (1.0 returnImmediately, 0.3 blocking false), which outlive their requests
	}
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// cancelWait is how long the requests cancelled at the end of the grace
// may take to answer: a worker's time to return once cancelled, and the
// void of an escrowed payment.
const cancelWait = router.DefaultStopGrace + x402.DefaultSettleTimeout

// shutdown shuts the servers down, waiting up to wait for the requests
// they run to end, and returns their errors: the context's when some did
// not end in time.
func shutdown(ctx context.Context, servers []*http.Server, wait time.Duration) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	var errs []error
	for _, hs := range servers {
		errs = append(errs, hs.Shutdown(sctx))
	}
	return errors.Join(errs...)
}
