package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust"
)

func TestSpread(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s      spread
		median float64
		atMost int
	}{
		{spread{0.05}, 0.05, 0},
		{spread{0.04, 0.01, 0.03}, 0.03, 2},
		{spread{0.04, 0.01, 0.02, 0.05}, 0.03, 2},
	} {
		if got := c.s.median(); got != c.median {
			t.Errorf("%v: median %v, want %v", c.s, got, c.median)
		}
		if got := c.s.atMost(0.03); got != c.atMost {
			t.Errorf("%v: %d at most 0.03, want %d", c.s, got, c.atMost)
		}
	}
	s := spread{0.04, 0.01, 0.03}
	s.median()
	if !slices.Equal(s, spread{0.04, 0.01, 0.03}) {
		t.Errorf("median reordered the figures: %v", s)
	}
}

// TestSimulateReal_draws runs the emotion fixture with two other draws
// of the reported calls: each draw's cells report their own calls, and
// the table's figures are those of the cells.
func TestSimulateReal_draws(t *testing.T) {
	t.Parallel()
	cfg := realCfg
	cfg.only, cfg.draws = []string{"emotion"}, 2
	rep, err := simulateReal(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tb := rep.tables[0]
	st := setting{rep: on, outcomes: 0.05}
	for _, pol := range tiers {
		for d := 1; d <= cfg.draws; d++ {
			c := cell{workload: "emotion", policy: pol, rep: on, outcomes: 0.05, draw: d}
			calls, ok := rep.cells[c]
			if pol == trust.PolicyOracle {
				if ok {
					t.Errorf("%s, draw %d: measured; oracle has no calibration map to draw for", pol, d)
				}
				continue
			}
			if len(calls) != tb.len() {
				t.Fatalf("%s, draw %d: %d calls, want %d", pol, d, len(calls), tb.len())
			}
			differ := false
			for i, k := range calls {
				if want := reports(cfg.seed, d, i, 0.05) && k.answered; k.reported != want {
					t.Errorf("%s, draw %d, claim %d: reported = %v, want %v", pol, d, i, k.reported, want)
				}
				differ = differ || reports(cfg.seed, d, i, 0.05) != reports(cfg.seed, 0, i, 0.05)
			}
			if !differ {
				t.Errorf("%s, draw %d: the seed's own draw of reported calls", pol, d)
			}
		}
		if _, ok := rep.cells[cell{workload: "emotion", policy: pol, rep: on, draw: 1}]; ok {
			t.Errorf("%s: a draw measured with no outcome reported", pol)
		}
	}

	var md bytes.Buffer
	rep.markdown(&md)
	for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
		var ece spread
		for _, s := range rep.draws(tb, pol, st) {
			ece = append(ece, s.ece())
		}
		if len(ece) != 3 || ece[0] != rep.measured(rep.get(tb, pol, st)).ece() {
			t.Fatalf("%s: ECE over the draws %v, want 3 figures, the seed's draw first", pol, ece)
		}
		row := fmt.Sprintf("| %s | on, 5%% outcomes | %.3f | %.3f | %.3f–%.3f | %d of 3 |", pol, ece[0], ece.median(), slices.Min(ece), slices.Max(ece), ece.atMost(0.03))
		if !strings.Contains(md.String(), row) {
			t.Errorf("the tables lack %q:\n%s", row, md.String())
		}
	}
	// What the book learned of each session, on every draw of adaptive's
	// cells with outcomes, and of no other cell.
	for c, learned := range rep.learned {
		if c.policy != trust.PolicyAdaptive || c.outcomes == 0 {
			t.Errorf("%s: learned reliabilities kept; only adaptive's cells with outcomes keep them", c)
		}
		for s, p := range learned {
			if !(p > 0 && p < 1) {
				t.Errorf("%s: session %d learned %v, want a reliability in (0, 1)", c, s+1, p)
			}
		}
	}
	if len(rep.learned) != 3 {
		t.Errorf("%d cells kept learned reliabilities, want 3 (adaptive at 5%%, the seed's draw and two others)", len(rep.learned))
	}
	own := rep.learned[cell{workload: "emotion", policy: trust.PolicyAdaptive, rep: on, outcomes: 0.05}]
	learned := spread{own[0]}
	for d := 1; d <= 2; d++ {
		learned = append(learned, rep.learned[cell{workload: "emotion", policy: trust.PolicyAdaptive, rep: on, outcomes: 0.05, draw: d}][0])
	}
	adaptive := rep.measured(rep.get(tb, trust.PolicyAdaptive, st))
	row := fmt.Sprintf("| 1 | %s | %s | %.3f | %.3f–%.3f |", pct2(rep.measured(rep.single["emotion"][0]).accuracy()), pct(adaptive.share(0)), own[0], slices.Min(learned), slices.Max(learned))
	if !strings.Contains(md.String(), row) {
		t.Errorf("the tables lack %q:\n%s", row, md.String())
	}
	if !strings.Contains(md.String(), "-draws 2") {
		t.Errorf("the command line lacks -draws 2:\n%.300s", md.String())
	}
}

func TestConfigCheck_draws(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  config
		want string
	}{
		{config{data: fixtures, draws: -1}, "-draws must be at least 0"},
		{config{draws: 3}, "-draws: other draws are measured on the real-data"},
	} {
		if err := c.cfg.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.cfg, err, c.want)
		}
	}
}

func TestReportedGap(t *testing.T) {
	t.Parallel()
	calls := []call{{correct: true, reported: true}, {reported: true}, {correct: true}, {correct: true}}
	if got := reportedGap(calls); got != -25 {
		t.Errorf("reported right 1 of 2, every call 3 of 4: gap %v points, want -25", got)
	}
}
