package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vouchkit/vouch/router"
)

// summary is the result of a load.
type summary struct {
	cfg      config
	elapsed  time.Duration
	sent     int
	byKind   map[kind][]time.Duration // latencies of the calls sent
	failures map[kind]int             // errors by kind of call
	errors   map[string]int           // errors by kind of error
	bad      int                      // errors other than rate limits

	before, after, later *serverVars
	settled              time.Duration
	counts               counts
	heap                 []heapPoint       // after each round
	firstErr             map[string]string // the first error of each kind
	interrupted          bool              // a signal ended the load
	unread               error             // why the counts of the last round were not read, after a signal
}

// heapPoint is the server's live heap (after a collection) once calls
// calls were answered.
type heapPoint struct {
	calls int
	live  uint64
}

// counts compares the server's executions with the answers.
type counts struct {
	expected, counted int64 // over the calls answered
	lost, twice       int   // answered calls with fewer or more executions than reported
	refusedRan        int   // rate-limited calls that ran anyway
	unsentRan         int   // calls never sent that ran
	unknown           int   // ids of this load the server saw but no call had
	unchecked         int   // failed calls (other than rate limits): not compared
}

func (s *summary) add(outcomes []outcome, elapsed time.Duration) {
	s.elapsed = elapsed
	s.byKind = map[kind][]time.Duration{}
	s.failures = map[kind]int{}
	s.errors = map[string]int{}
	s.firstErr = map[string]string{}
	for _, o := range outcomes {
		if !o.sent {
			continue
		}
		s.sent++
		s.byKind[o.call.kind] = append(s.byKind[o.call.kind], o.latency)
		if o.err != nil {
			s.failures[o.call.kind]++
			k := errorKind(o.err)
			if s.errors[k] == 0 {
				s.firstErr[k] = o.err.Error()
			}
			s.errors[k]++
			if !allowed(o.err) {
				s.bad++
			}
		}
	}
}

// allowed reports whether err is a deliberate rate limit.
func allowed(err error) bool {
	var p *router.Error
	return errors.As(err, &p) && p.Status == 429
}

// errorKind names the kind of err for the table: the HTTP status and code
// of a problem, or the kind of failure.
func errorKind(err error) string {
	var p *router.Error
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &p):
		return fmt.Sprintf("%d %s", p.Status, p.Code)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "cut short by -duration or a signal"
	case errors.Is(err, errNoReceipt):
		return "trust answer without its receipt"
	case errors.Is(err, router.ErrMalformedResponse):
		return "malformed answer"
	case errors.As(err, &ne), errors.As(err, &ue):
		return "transport error"
	}
	return "other"
}

// passed reports whether every check passed.
func (s *summary) passed() bool { return len(s.failed()) == 0 }

// failed lists the checks that failed.
func (s *summary) failed() []string {
	var f []string
	switch {
	case s.interrupted:
		f = append(f, fmt.Sprintf("interrupted by a signal after %d of %d calls", s.sent, s.cfg.calls))
	case s.sent < s.cfg.calls:
		f = append(f, fmt.Sprintf("%d calls not sent within -duration %v", s.cfg.calls-s.sent, s.cfg.duration))
	}
	if s.bad > 0 {
		f = append(f, fmt.Sprintf("%d errors other than rate limits", s.bad))
	}
	c := s.counts
	if s.before != nil && s.unread == nil &&
		(c.lost > 0 || c.twice > 0 || c.refusedRan > 0 || c.unsentRan > 0 || c.unknown > 0 || c.expected != c.counted) {
		f = append(f, fmt.Sprintf("executions do not match: %d expected, %d counted; %d calls lost, %d run twice, %d refused but run, %d unsent but run, %d unknown ids",
			c.expected, c.counted, c.lost, c.twice, c.refusedRan, c.unsentRan, c.unknown))
	}
	if s.after == nil {
		return f
	}
	if s.after.Goroutines > s.before.Goroutines+goroutineSlack {
		f = append(f, fmt.Sprintf("goroutines: %d before the load, %d after %v", s.before.Goroutines, s.after.Goroutines, s.settled.Round(time.Millisecond)))
	}
	if grow := int64(s.later.Memstats.HeapInuse) - int64(s.after.Memstats.HeapInuse); grow > max(int64(s.after.Memstats.HeapInuse)/20, 1<<20) {
		f = append(f, fmt.Sprintf("heap grew by %s in %v with no load", mib(uint64(grow)), s.cfg.quiet))
	}
	return f
}

// write prints the table and the checks.
func (s *summary) write(w io.Writer) {
	fmt.Fprintf(w, "load: %d calls at %d concurrent clients against %s in %v\n\n",
		s.sent, s.cfg.concurrency, s.cfg.url, s.elapsed.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tcalls\terrors\tp50\tp90\tp99\tmax\t")
	var all []time.Duration
	for _, name := range kindNames() {
		lat := s.byKind[kind(name)]
		if len(lat) == 0 {
			continue
		}
		all = append(all, lat...)
		row(tw, name, lat, s.failures[kind(name)])
	}
	total := 0
	for _, n := range s.failures {
		total += n
	}
	if len(all) > 0 {
		row(tw, "all", all, total)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nthroughput: %.0f calls/s\n", float64(s.sent)/s.elapsed.Seconds())

	if len(s.errors) == 0 {
		fmt.Fprintln(w, "errors by kind: none")
	} else {
		kinds := make([]string, 0, len(s.errors))
		for k := range s.errors {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		fmt.Fprintln(w, "errors by kind:")
		for _, k := range kinds {
			note := ""
			if strings.HasPrefix(k, "429 ") {
				note = " (deliberate rate limit)"
			}
			fmt.Fprintf(w, "  %-40s %d%s\n", k, s.errors[k], note)
			if first, ok := s.firstErr[k]; ok && note == "" {
				fmt.Fprintf(w, "    first: %s\n", first)
			}
		}
	}
	s.writeServer(w)
	if f := s.failed(); len(f) > 0 {
		fmt.Fprintln(w, "FAIL:")
		for _, line := range f {
			fmt.Fprintln(w, "  "+line)
		}
		return
	}
	fmt.Fprintln(w, "PASS")
}

// writeServer prints the server-side checks, or why they did not run.
func (s *summary) writeServer(w io.Writer) {
	if s.before == nil {
		fmt.Fprintln(w, "server-side checks: skipped (no -debug-url)")
		return
	}
	c := s.counts
	if s.unread != nil {
		fmt.Fprintf(w, "worker executions: not compared after the signal: %v\n", s.unread)
	} else {
		fmt.Fprintf(w, "worker executions: %d reported by the answers, %d counted by the server; %d calls lost, %d run twice (%d failed calls not compared)\n",
			c.expected, c.counted, c.lost, c.twice, c.unchecked)
	}
	if s.after == nil {
		fmt.Fprintln(w, "goroutines and heap: not watched (interrupted by a signal)")
	} else {
		fmt.Fprintf(w, "goroutines: %d before the load, %d after it (settled in %v)\n",
			s.before.Goroutines, s.after.Goroutines, s.settled.Round(time.Millisecond))
		fmt.Fprintf(w, "heap in use: %s before the load, %s after it, %s %v later (%d GCs during the load)\n",
			mib(s.before.Memstats.HeapInuse), mib(s.after.Memstats.HeapInuse), mib(s.later.Memstats.HeapInuse), s.cfg.quiet,
			s.after.Memstats.NumGC-s.before.Memstats.NumGC)
	}
	fmt.Fprintf(w, "live heap after GC: %s before the load", mib(s.before.Memstats.HeapAlloc))
	for _, h := range s.heap {
		fmt.Fprintf(w, ", %s at %d calls", mib(h.live), h.calls)
	}
	fmt.Fprintln(w)
}

func row(w io.Writer, name string, lat []time.Duration, errs int) {
	slices.Sort(lat)
	// The nearest rank: the smallest latency that pct percent of the
	// calls do not exceed, the ceil(pct·n/100)-th.
	q := func(pct int) string {
		return fmtDuration(lat[max(0, (pct*len(lat)+99)/100-1)])
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", name, len(lat), errs, q(50), q(90), q(99), fmtDuration(lat[len(lat)-1]))
}

func fmtDuration(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
