package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// defaultThreshold marks the adaptive cell that runs with the trust
// service's own default escalation threshold (no option given).
const defaultThreshold = -1

// config is what to simulate.
type config struct {
	calls int       // claims per cell
	seed  uint64    // of the workload and the workers
	rates []float64 // worker error rates, one panel each
	sweep []float64 // escalation thresholds (a lone run's confidence) to measure adaptive at, besides the default

	calibrated bool // the what-if of judge: wrong answers report low confidence
}

// cell is one measurement: a tier on the panel of one error rate.
type cell struct {
	rate      float64
	policy    trust.Policy
	threshold float64 // adaptive only; defaultThreshold for the service's default
}

func (c cell) String() string {
	s := fmt.Sprintf("p=%.1f %s", c.rate, c.policy)
	if c.policy == trust.PolicyAdaptive && c.threshold != defaultThreshold {
		s += " t=" + strconv.FormatFloat(c.threshold, 'g', -1, 64)
	}
	return s
}

// tally is what one cell measured.
type tally struct {
	calls, correct, answered, replicas int
	minReplicas, maxReplicas           int
	stops                              map[int]int         // runs launched → calls
	byConfidence                       map[float64]*[2]int // stated confidence → answered calls, correct ones
	easy, easyCorrect                  int
	hard, hardCorrect                  int
	statuses                           []trust.Status // by claim
	replays                            int            // steps the panel ran again (see panel)
}

func (t *tally) add(c claim, resp *trust.Response) {
	n := resp.Evidence.Launched
	if t.calls == 0 || n < t.minReplicas {
		t.minReplicas = n
	}
	t.maxReplicas = max(t.maxReplicas, n)
	t.calls++
	t.replicas += n
	t.stops[n]++
	t.statuses = append(t.statuses, resp.Status)
	ok := resp.Status == trust.Status(c.truth)
	if resp.Status == trust.StatusValid || resp.Status == trust.StatusInvalid {
		t.answered++
		b := t.byConfidence[resp.Confidence]
		if b == nil {
			b = new([2]int)
			t.byConfidence[resp.Confidence] = b
		}
		b[0]++
		if ok {
			b[1]++
		}
	}
	if ok {
		t.correct++
	}
	if c.hard {
		t.hard++
		if ok {
			t.hardCorrect++
		}
	} else {
		t.easy++
		if ok {
			t.easyCorrect++
		}
	}
}

func (t *tally) accuracy() float64      { return ratio(t.correct, t.calls) }
func (t *tally) coverage() float64      { return ratio(t.answered, t.calls) }
func (t *tally) answeredRight() float64 { return ratio(t.correct, t.answered) }
func (t *tally) meanReplicas() float64  { return ratio(t.replicas, t.calls) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// report is every cell's tally.
type report struct {
	cfg   config
	cells map[cell]*tally
}

// simulate runs every cell: fast, safe, oracle and adaptive at the
// default threshold and at each of cfg.sweep, on each error rate's panel.
// Cells run concurrently, each on an engine and a service of its own; the
// calls of a cell run one after another, which keeps it deterministic.
func simulate(ctx context.Context, cfg config, progress io.Writer) (*report, error) {
	if cfg.calls < 1 {
		return nil, fmt.Errorf("-calls must be at least 1, got %d", cfg.calls)
	}
	claims := workload(cfg.seed, cfg.calls)
	var cells []cell
	for _, p := range cfg.rates {
		for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
			cells = append(cells, cell{p, pol, defaultThreshold})
		}
		for _, t := range cfg.sweep {
			cells = append(cells, cell{p, trust.PolicyAdaptive, t})
		}
	}
	rep := &report{cfg: cfg, cells: make(map[cell]*tally, len(cells))}
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * runtime.GOMAXPROCS(0)) // a cell waits on its workers much of the time
	for _, c := range cells {
		g.Go(func() error {
			t, err := measure(ctx, cfg, c, claims)
			if err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
			mu.Lock()
			defer mu.Unlock()
			rep.cells[c] = t
			fmt.Fprintf(progress, "accuracy: %d/%d cells done (%s; %d steps replayed)\n", len(rep.cells), len(cells), c, t.replays)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rep, nil
}

// measure makes one trust call per claim under c's tier, on a fresh
// engine over a fresh panel of c's error rate.
func measure(ctx context.Context, cfg config, c cell, claims []claim) (*tally, error) {
	p := newPanel(cfg.seed, c.rate, cfg.calibrated, claims)
	engine, err := router.NewEngine(p.sessions(),
		router.WithEngineClock(p.now),
		// No run waits on time: a replica still running after this is
		// one the plan let wait, and the check below reports it.
		router.WithReplicaTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	// Every tier draws from the panel's five sessions; adaptive takes its
	// candidates from the pool (the stepper reports no sessions).
	opts := []trust.Option{trust.WithSessionPool(1, 2, 3, 4, 5)}
	if c.policy == trust.PolicyAdaptive && c.threshold != defaultThreshold {
		opts = append(opts, trust.WithEscalationThreshold(c.threshold))
	}
	svc, err := trust.New(stepper{Service: engine, p: p}, opts...)
	if err != nil {
		return nil, err
	}
	t := &tally{stops: map[int]int{}, byConfidence: map[float64]*[2]int{}, statuses: make([]trust.Status, 0, len(claims))}
	for i, cl := range claims {
		resp, err := svc.Call(ctx, &trust.Request{
			Mode:   trust.ModeValidation,
			Policy: c.policy,
			Task: trust.Task{
				Type:          "classification",
				ClaimedResult: json.RawMessage(`{"claim":` + strconv.Itoa(i) + `}`),
			},
		})
		if err != nil {
			return nil, fmt.Errorf("claim %d: %w", i, err)
		}
		if _, err := p.err(); err != nil {
			return nil, fmt.Errorf("claim %d: %w", i, err)
		}
		t.add(cl, resp)
	}
	t.replays, _ = p.err()
	return t, nil
}
