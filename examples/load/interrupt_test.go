package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRun_interruptedPrintsSummary: a signal in the middle of the load
// (ctx ends after the server has counted 40 calls) stops the calls not yet
// made; the server's counts are still read, with a time limit of their
// own, and compared for the calls made; the settle and heap watch are
// skipped; and the summary says so rather than the load ending on
// "context canceled" with none.
func TestRun_interruptedPrintsSummary(t *testing.T) {
	ts := newTestServer(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts.mu.Lock()
	ts.onCall = func(n int) {
		if n >= 40 {
			cancel()
		}
	}
	ts.mu.Unlock()
	cfg := ts.config(500, 4, "validate_v2=1")
	s, err := run(ctx, cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("run after a signal: %v; want the summary", err)
	}
	var out bytes.Buffer
	s.write(&out)
	text := out.String()
	if s.sent >= 500 || s.after != nil {
		t.Errorf("%d calls sent, after %v; want fewer than 500 and no heap watch", s.sent, s.after)
	}
	if n := len(s.heap); n != 1 || s.heap[0].calls != s.sent {
		t.Errorf("heap read at %+v, want one read, at the %d calls made", s.heap, s.sent)
	}
	if c := s.counts; c.expected == 0 || c.expected != c.counted || c.lost != 0 || c.twice != 0 || c.unsentRan != 0 || c.unknown != 0 {
		t.Errorf("counts %+v; want the answered calls compared, all matching", c)
	}
	wantFailed := []string{"interrupted by a signal after " + strconv.Itoa(s.sent) + " of 500 calls"}
	if s.bad > 0 { // calls in flight when the signal came are cut short
		wantFailed = append(wantFailed, strconv.Itoa(s.bad)+" errors other than rate limits")
	}
	if diff := cmp.Diff(wantFailed, s.failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
	for _, w := range []string{"worker executions: " + strconv.FormatInt(s.counts.expected, 10) + " reported by the answers",
		"goroutines and heap: not watched (interrupted by a signal)", "FAIL:"} {
		if !strings.Contains(text, w) {
			t.Errorf("summary lacks %q:\n%s", w, text)
		}
	}
}

// TestRun_progressStopsWithTheLastRound: the progress lines (calls done,
// calls/s) stop once the last round's calls are made; the settle and
// heap watch that follow print none, so the rate does not decay over
// time with no calls.
func TestRun_progressStopsWithTheLastRound(t *testing.T) {
	ts := newTestServer(t, 1)
	cfg := ts.config(200, 8, "validate_v2=1")
	cfg.round = 100
	cfg.every = time.Millisecond // many lines while the heap is watched, were any printed
	var progress bytes.Buffer
	s, err := run(context.Background(), cfg, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if !s.passed() {
		t.Fatalf("checks failed: %v", s.failed())
	}
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "load: 200 calls, server's live heap ") {
		t.Errorf("the last progress line is %q, want the heap read after the last round; the last lines:\n%s",
			last, strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
}
