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
	trial  *router.Client // never retries: a 429 is the answer trial_v2 measures
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
	// The trial routes answer 429 with a Retry-After of a few seconds,
	// which the default retry policy waits out.
	trial, err := router.NewClient(cfg.url, router.WithAPIKey(cfg.apiKey), router.WithHTTPClient(hc), router.WithUserAgent("vouch-load"),
		router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		return nil, err
	}
	tc, err := trust.NewClient(cfg.url, trust.WithAPIKey(cfg.apiKey), trust.WithHTTPClient(hc), trust.WithUserAgent("vouch-load"))
	if err != nil {
		return nil, err
	}
	return &loader{cfg: cfg, prefix: "load-" + strings.ToLower(rand.Text()[:10]), hc: hc, router: rc, trial: trial, trust: tc}, nil
}

func (l *loader) close() { l.hc.CloseIdleConnections() }

// run reads the server's variables, sends the calls round by round,
// comparing the server's counts with each round's answers and recording
// its live heap after it, and checks the server once it has settled.
//
// When ctx ends (a signal) the calls not yet sent are not made, the
// server's counts are read once more, with a short time limit of their
// own, for the calls that were, and the settle and heap watch are
// skipped: the summary says so.
func (l *loader) run(ctx context.Context, progress io.Writer) (*summary, error) {
	s := &summary{cfg: l.cfg}
	if l.cfg.debugURL != "" {
		before, err := l.vars(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the server's variables before the load: %w", err)
		}
		if before.Limit > 0 && min(l.cfg.round, l.cfg.calls) > before.Limit {
			return nil, fmt.Errorf("-round %d is above the %d call ids the server counts (examples/server -debug-call-ids): its counts would forget calls before they are compared", l.cfg.round, before.Limit)
		}
		s.before = before
	}

	sending, cancel := context.WithTimeout(ctx, l.cfg.duration)
	defer cancel()
	outcomes := make([]outcome, l.cfg.calls)
	p := &tally{calls: l.cfg.calls, start: time.Now()}
	stopProgress := sync.OnceFunc(p.print(progress, l.cfg.every))
	defer stopProgress()
	var elapsed time.Duration
	for first := 0; first < l.cfg.calls; first += l.cfg.round {
		round := outcomes[first:min(first+l.cfg.round, l.cfg.calls)]
		end := first + len(round)
		began := time.Now()
		l.send(sending, round, first, p)
		elapsed += time.Since(began)
		made := int(p.done.Load()) // fewer than end when the load was cut short
		if end == l.cfg.calls || ctx.Err() != nil {
			stopProgress()
		}
		if l.cfg.debugURL != "" {
			v, err := l.varsAfter(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				return nil, fmt.Errorf("reading the server's variables after %d calls: %w", made, err)
			case err != nil:
				s.unread = fmt.Errorf("reading the server's variables after %d calls: %w", made, err)
			default:
				l.compare(&s.counts, v, round, end)
				s.heap = append(s.heap, heapPoint{calls: made, live: v.Memstats.HeapAlloc})
				p.say(progress, "load: %d calls, server's live heap %s after GC\n", made, mib(v.Memstats.HeapAlloc))
			}
		}
		if ctx.Err() != nil {
			s.interrupted = true
			l.unsent(outcomes[end:], end)
			break
		}
	}
	s.add(outcomes, elapsed)
	l.hc.CloseIdleConnections() // the server's connection goroutines may end

	if l.cfg.debugURL != "" && !s.interrupted {
		if err := l.check(ctx, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// varsAfter reads the server's variables after a round: under ctx, or,
// when ctx has ended (a signal), under a short time limit of its own, so
// that the calls made are still compared.
func (l *loader) varsAfter(ctx context.Context) (*serverVars, error) {
	v, err := l.vars(ctx)
	if err != nil && ctx.Err() != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptedRead)
		defer cancel()
		v, err = l.vars(ctx)
	}
	return v, err
}

// interruptedRead bounds the read of the server's variables after a
// signal has ended the load.
const interruptedRead = 5 * time.Second

// unsent marks the calls of rest, numbered from first, as not sent.
func (l *loader) unsent(rest []outcome, first int) {
	for i := range rest {
		rest[i] = outcome{call: newCall(l.cfg.seed, l.prefix, first+i, l.cfg.mix)}
	}
}

// tally counts the calls made and failed, for the progress lines.
type tally struct {
	calls        int
	start        time.Time
	done, failed atomic.Int64
	mu           sync.Mutex // held while a line is printed
}

// say prints one progress line.
func (p *tally) say(w io.Writer, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(w, format, args...)
}

// print prints a progress line every interval until the function it
// returns is called.
func (p *tally) print(w io.Writer, every time.Duration) (stop func()) {
	done := make(chan struct{})
	var printing sync.WaitGroup
	printing.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				d := p.done.Load()
				p.say(w, "load: %d/%d calls, %d errors, %.0f calls/s, %s\n",
					d, p.calls, p.failed.Load(), float64(d)/time.Since(p.start).Seconds(), time.Since(p.start).Round(time.Second))
			}
		}
	})
	return func() { close(done); printing.Wait() }
}

// send makes the calls first, first+1, ... of round with cfg.concurrency
// clients until all are made or ctx ends; the calls not sent are left
// marked so.
func (l *loader) send(ctx context.Context, round []outcome, first int, p *tally) {
	var next atomic.Int64
	var clients sync.WaitGroup
	for range l.cfg.concurrency {
		clients.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(round) || ctx.Err() != nil {
					return
				}
				c := newCall(l.cfg.seed, l.prefix, first+i, l.cfg.mix)
				began := time.Now()
				exp, err := l.send1(ctx, c)
				round[i] = outcome{call: c, sent: true, latency: time.Since(began), err: err, expected: exp}
				if err != nil {
					p.failed.Add(1)
				}
				p.done.Add(1)
			}
		})
	}
	clients.Wait()
	for i := range round {
		if !round[i].sent {
			round[i].call = newCall(l.cfg.seed, l.prefix, first+i, l.cfg.mix)
		}
	}
}

// send1 is do, with the call's Idempotency-Key set to its id, so that a
// retried attempt is answered from the server's record.
func (l *loader) send1(ctx context.Context, c call) (int64, error) {
	ctx = router.WithIdempotencyKey(ctx, c.id)
	ctx = trust.WithIdempotencyKey(ctx, c.id)
	return l.do(ctx, c)
}
