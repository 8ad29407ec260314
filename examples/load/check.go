package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// goroutineSlack is how many more goroutines than before the load the
// server may have once it has settled: the runtime and net/http start a
// few on demand (a timer, a connection's reader) that live on.
const goroutineSlack = 8

// heapQuiet is how long the heap is watched, once the server has
// settled, for growth with no load, unless the config says otherwise.
const heapQuiet = 2 * time.Second

// serverVars are the members of the server's /debug/vars the checks read.
type serverVars struct {
	Goroutines int `json:"goroutines"`
	Memstats   struct {
		HeapAlloc uint64 `json:"HeapAlloc"`
		HeapInuse uint64 `json:"HeapInuse"`
		NumGC     uint32 `json:"NumGC"`
	} `json:"memstats"`
	Executions map[string]int64 `json:"executions_by_call_id"`
	Limit      int              `json:"call_ids_limit"` // 0 from a server that does not say
}

// vars reads the server's variables.
func (l *loader) vars(ctx context.Context) (*serverVars, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	u, err := url.Parse(l.cfg.debugURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("gc", "1") // heap figures of live memory only (examples/server collects first)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", l.cfg.debugURL, resp.Status)
	}
	var v serverVars
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", l.cfg.debugURL, err)
	}
	if v.Executions == nil {
		return nil, fmt.Errorf("GET %s: no executions_by_call_id: is it a vouch demo server started with -debug-addr?", l.cfg.debugURL)
	}
	return &v, nil
}

// check waits for the server to settle (its goroutines back to what they
// were before the load, within cfg.settle) and watches its heap for
// cfg.quiet. When ctx ends (a signal) it stops and marks s interrupted,
// leaving the checks it did not finish out of s.
func (l *loader) check(ctx context.Context, s *summary) error {
	began := time.Now()
	var after *serverVars
	interrupted := func(err error) error {
		if ctx.Err() == nil {
			return fmt.Errorf("reading the server's variables after the load: %w", err)
		}
		s.interrupted = true
		return nil
	}
	for {
		v, err := l.vars(ctx)
		if err != nil {
			return interrupted(err)
		}
		after = v
		if v.Goroutines <= s.before.Goroutines+goroutineSlack || time.Since(began) >= l.cfg.settle {
			break
		}
		select {
		case <-ctx.Done():
			return interrupted(ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	s.settled = time.Since(began)
	select {
	case <-ctx.Done():
		return interrupted(ctx.Err())
	case <-time.After(l.cfg.quiet):
	}
	later, err := l.vars(ctx)
	if err != nil {
		return interrupted(err)
	}
	s.after, s.later = after, later
	return nil
}

// compare adds to c what v, read once the calls of round are answered and
// before any later call is made, says of them: each call's executions
// against what its answer reported. An id of this load numbered sent or
// above ran before it was sent.
func (l *loader) compare(c *counts, v *serverVars, round []outcome, sent int) {
	for _, o := range round {
		got := v.Executions[o.call.id]
		switch {
		case !o.sent:
			if got != 0 {
				c.unsentRan++
			}
		case o.err != nil && !allowed(o.err):
			c.unchecked++ // a failure is reported as such; what ran is not known
		case o.err != nil: // a rate limit: nothing may have run
			if got != 0 {
				c.refusedRan++
			}
		default:
			c.expected += o.expected
			c.counted += got
			switch {
			case got < o.expected:
				c.lost++
			case got > o.expected:
				c.twice++
			}
		}
	}
	for id := range v.Executions {
		n, err := strconv.Atoi(strings.TrimPrefix(id, l.prefix+"-"))
		if strings.HasPrefix(id, l.prefix+"-") && (err != nil || n >= sent) {
			c.unknown++
		}
	}
}
