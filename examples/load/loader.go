package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

var errNoReceipt = errors.New("load: trust answer without the inline receipt asked for")

// loader runs one load.
type loader struct {
	cfg    config
	prefix string // starts every call id of this load
	hc     *http.Client
	router *router.Client
	trust  *trust.Client
}

// outcome is what became of one call.
type outcome struct {
	call     call
	sent     bool
	latency  time.Duration
	err      error
	expected int64 // worker executions the answer reports
}

func newLoader(cfg config) (*loader, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = cfg.concurrency
	tr.MaxIdleConnsPerHost = cfg.concurrency
	hc := &http.Client{Transport: tr}
	rc, err := router.NewClient(cfg.url, router.WithAPIKey(cfg.apiKey), router.WithHTTPClient(hc), router.WithUserAgent("vouch-load"))
	if err != nil {
		return nil, err
	}
	tc, err := trust.NewClient(cfg.url, trust.WithAPIKey(cfg.apiKey), trust.WithHTTPClient(hc), trust.WithUserAgent("vouch-load"))
	if err != nil {
		return nil, err
	}
	return &loader{cfg: cfg, prefix: "load-" + strings.ToLower(rand.Text()[:10]), hc: hc, router: rc, trust: tc}, nil
}

func (l *loader) close() { l.hc.CloseIdleConnections() }

// run reads the server's variables, sends the calls, reads them again once
// the server has settled, and sums it all up.
func (l *loader) run(ctx context.Context, progress io.Writer) (*summary, error) {
	s := &summary{cfg: l.cfg}
	if l.cfg.debugURL != "" {
		before, err := l.vars(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the server's variables before the load: %w", err)
		}
		s.before = before
	}

	outcomes, elapsed := l.send(ctx, progress)
	s.add(outcomes, elapsed)
	l.hc.CloseIdleConnections() // the server's connection goroutines may end

	if l.cfg.debugURL != "" {
		if err := l.check(ctx, s, outcomes); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// send makes the calls with cfg.concurrency clients until all are made or
// cfg.duration has passed, printing progress every cfg.every.
func (l *loader) send(ctx context.Context, progress io.Writer) ([]outcome, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.duration)
	defer cancel()
	outcomes := make([]outcome, l.cfg.calls)
	var next, done, failed atomic.Int64
	start := time.Now()

	stopProgress := make(chan struct{})
	var printing sync.WaitGroup
	printing.Go(func() {
		tick := time.NewTicker(l.cfg.every)
		defer tick.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-tick.C:
				d := done.Load()
				fmt.Fprintf(progress, "load: %d/%d calls, %d errors, %.0f calls/s, %s\n",
					d, l.cfg.calls, failed.Load(), float64(d)/time.Since(start).Seconds(), time.Since(start).Round(time.Second))
			}
		}
	})

	var clients sync.WaitGroup
	for range l.cfg.concurrency {
		clients.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= l.cfg.calls || ctx.Err() != nil {
					return
				}
				c := newCall(l.cfg.seed, l.prefix, n, l.cfg.mix)
				began := time.Now()
				exp, err := l.send1(ctx, c)
				outcomes[n] = outcome{call: c, sent: true, latency: time.Since(began), err: err, expected: exp}
				if err != nil {
					failed.Add(1)
				}
				done.Add(1)
			}
		})
	}
	clients.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	printing.Wait()
	for n := range outcomes {
		if !outcomes[n].sent {
			outcomes[n].call = newCall(l.cfg.seed, l.prefix, n, l.cfg.mix)
		}
	}
	return outcomes, elapsed
}

// send1 is do, with the call's Idempotency-Key set to its id, so that a
// retried attempt is answered from the server's record.
func (l *loader) send1(ctx context.Context, c call) (int64, error) {
	ctx = router.WithIdempotencyKey(ctx, c.id)
	ctx = trust.WithIdempotencyKey(ctx, c.id)
	return l.do(ctx, c)
}
