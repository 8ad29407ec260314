package trust_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// voter is a fake worker: it answers a validation with verdict and a
// delegation with output, at confidence conf, after delay (cut short by
// its context unless deaf), or fails with fail.
type voter struct {
	verdict router.Verdict
	output  any
	conf    float64
	delay   time.Duration
	deaf    bool // answers after delay even once its context ended
	fail    error
	hang    bool
}

func (v voter) Work(ctx context.Context, job *router.Job) (*router.Result, error) {
	if v.hang {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	if v.delay > 0 {
		t := time.NewTimer(v.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			if !v.deaf {
				return nil, context.Cause(ctx)
			}
			<-t.C
		}
	}
	if v.fail != nil {
		return nil, v.fail
	}
	res := &router.Result{Confidence: v.conf, Reasons: []string{fmt.Sprintf("%s at %v", v.verdict, v.conf)}}
	switch job.Kind {
	case router.KindDelegate:
		res.Output = v.output
	default:
		res.Verdict = v.verdict
	}
	return res, nil
}

// panel is a scenario: five sessions' workers.
type panel struct {
	name    string
	workers []voter
}

func yes(out any) voter { return voter{verdict: router.VerdictValid, output: out, conf: 0.9} }
func no(out any) voter  { return voter{verdict: router.VerdictInvalid, output: out, conf: 0.8} }

func slowly(v voter) voter { v.delay = 120 * time.Millisecond; return v }

var errWorker = errors.New("worker broke")

// panels are the scenarios every mode and tier runs on.
func panels() []panel {
	return []panel{
		{"unanimous", []voter{yes(18), yes(18), yes(18), yes(18), yes(18)}},
		{"split", []voter{yes(18), yes(18), no(19), yes(18), no(19)}},
		{"slow tail", []voter{yes(18), yes(18), slowly(no(19)), slowly(yes(18)), slowly(yes(18))}},
		{"deaf dissent", []voter{yes(18), yes(18), {verdict: router.VerdictInvalid, output: 19, conf: 0.7, delay: 20 * time.Millisecond, deaf: true}, yes(18), yes(18)}},
		{"failures", []voter{yes(18), {fail: errWorker}, yes(18), {hang: true}, no(19)}},
		{"odd confidences", []voter{
			{verdict: router.VerdictValid, output: 18, conf: 1},
			{verdict: router.VerdictValid, output: "18", conf: 0},
			{verdict: router.VerdictInvalid, output: 19, conf: 1e-9},
			{verdict: router.VerdictValid, output: 18, conf: 1.5},
			{verdict: router.VerdictValid, output: 18, conf: math.NaN()},
		}},
		{"no number", []voter{yes(18), yes("about 18"), yes(18), no(19), yes(18)}},
	}
}

// numbersRequest is a request of mode at policy; numeric asks a
// delegation for a number.
func numbersRequest(mode trust.Mode, policy trust.Policy, numeric bool) *trust.Request {
	req := request(mode, policy)
	if numeric {
		req.Task.Answer = trust.AnswerNumber
	}
	req.Receipt = receipt.Inline()
	return req
}

// numbersService is a service with signed receipts over a new engine of
// p's five sessions, with reputation on or off.
func numbersService(t *testing.T, p panel, reputationOn bool) *trust.Service {
	t.Helper()
	ws := make([]router.Worker, len(p.workers))
	for i, v := range p.workers {
		ws[i] = v
	}
	opts := []router.EngineOption{router.WithReplicaTimeout(250 * time.Millisecond), router.WithStopGrace(200 * time.Millisecond), router.WithHealth(1000, time.Millisecond)}
	var sopts []trust.Option
	if !reputationOn {
		opts = append(opts, router.WithReputation(nil))
	}
	e, err := router.NewEngine(routertest.Sessions(1, 5, ws...), opts...)
	if err != nil {
		t.Fatal(err)
	}
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	sopts = append(sopts, trust.WithSigningKey(priv))
	s, err := trust.New(e, sopts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNumbers_recomputedFromResponse runs every mode at every tier on
// panels of fast, slow, failing, hanging and oddly confident workers,
// with reputation on and off, and recomputes each response's counts,
// agreement and confidence from the response alone, and compares its
// receipt with it.
func TestNumbers_recomputedFromResponse(t *testing.T) {
	type kind struct {
		mode    trust.Mode
		numeric bool
	}
	kinds := []kind{{trust.ModeValidation, false}, {trust.ModeArbitration, false}, {trust.ModeDelegation, false}, {trust.ModeDelegation, true}}
	policies := []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive}
	for _, p := range panels() {
		for _, rep := range []bool{false, true} {
			s := numbersService(t, p, rep)
			for _, k := range kinds {
				for _, policy := range policies {
					name := fmt.Sprintf("%s/rep=%v/%s/numeric=%v/%s", p.name, rep, k.mode, k.numeric, policy)
					t.Run(name, func(t *testing.T) {
						resp, err := s.Call(context.Background(), numbersRequest(k.mode, policy, k.numeric))
						if err != nil {
							checkFailure(t, err)
							return
						}
						checkNumbers(t, resp, rep)
						checkReceipt(t, resp, policy)
						checkLabels(t, p, resp)
					})
				}
			}
		}
	}
}

// checkLabels checks that every run that answered shows the label its
// worker answered: a verdict for a validation, OK for a delegation.
func checkLabels(t *testing.T, p panel, resp *trust.Response) {
	t.Helper()
	i := 0
	for _, st := range resp.Evidence.Steps {
		if st.Check {
			continue
		}
		for _, id := range st.Sessions {
			l := resp.Evidence.Verdicts[i]
			i++
			if id < 1 || int(id) > len(p.workers) {
				t.Errorf("run on unknown session %d", id)
				continue
			}
			v := p.workers[id-1]
			switch {
			case l == router.LabelCancelled || l == router.LabelTimeout || l == router.LabelError:
				if v.fail == nil && !v.hang && v.delay == 0 && v.conf >= 0 && v.conf <= 1 {
					t.Errorf("run %d on session %d, a prompt answer, is labelled %s", i-1, id, l)
				}
			case resp.Evidence.Steps[0].Route == "/api/v3/delegate":
				if l != router.LabelOK {
					t.Errorf("delegation run %d labelled %s", i-1, l)
				}
			case l != router.Label(v.verdict):
				t.Errorf("run %d on session %d answered %s, labelled %s", i-1, id, v.verdict, l)
			}
		}
	}
}

// TestNumbers_failuresNegative runs the failing panel over an engine
// that counts failures as negative evidence.
func TestNumbers_failuresNegative(t *testing.T) {
	p := panels()[4]
	ws := make([]router.Worker, len(p.workers))
	for i, v := range p.workers {
		ws[i] = v
	}
	for _, rep := range []bool{false, true} {
		opts := []router.EngineOption{router.WithReplicaTimeout(250 * time.Millisecond), router.WithStopGrace(200 * time.Millisecond),
			router.WithHealth(1000, time.Millisecond), router.WithFailureMode(consensus.FailuresNegative)}
		if !rep {
			opts = append(opts, router.WithReputation(nil))
		}
		e, err := router.NewEngine(routertest.Sessions(1, 5, ws...), opts...)
		if err != nil {
			t.Fatal(err)
		}
		_, priv, _ := ed25519.GenerateKey(nil)
		s, err := trust.New(e, trust.WithSigningKey(priv))
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation} {
			for _, policy := range []trust.Policy{trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
				for range 3 {
					resp, err := s.Call(context.Background(), numbersRequest(mode, policy, false))
					if err != nil {
						t.Logf("%s %s: %v", mode, policy, err)
						continue
					}
					// The trust tally counts failures as no votes whatever
					// the router's mode; the receipt's consensus snapshot is
					// the router's block, which counts them against.
					checkNumbers(t, resp, rep)
					checkDecision(t, resp, policy)
				}
			}
		}
	}
}

// TestNumbers_calibrated reports outcomes on calls over a router that
// keeps reputation, so that the calibration maps hold points, and
// recomputes each later response's confidence from its calibration
// basis, and its receipt's from the response.
func TestNumbers_calibrated(t *testing.T) {
	p := panels()[1]
	s := numbersService(t, p, true)
	ctx := context.Background()
	kinds := []struct {
		mode    trust.Mode
		numeric bool
	}{{trust.ModeValidation, false}, {trust.ModeDelegation, false}, {trust.ModeDelegation, true}}
	points := 0
	for i := range 48 {
		k := kinds[i%len(kinds)]
		policy := []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive, trust.PolicyOracle, trust.PolicyFast}[i/len(kinds)%4]
		resp, err := s.Call(ctx, numbersRequest(k.mode, policy, k.numeric))
		if err != nil {
			checkFailure(t, err)
			continue
		}
		checkNumbers(t, resp, true)
		checkReceipt(t, resp, policy)
		checkLabels(t, p, resp)
		if c := resp.Evidence.Calibration; c != nil && len(c.Points) > 0 {
			points++
		}
		if resp.Status != trust.StatusRetry {
			if err := s.Feedback(ctx, resp.TraceID, i%4 != 0); err != nil {
				t.Logf("Feedback: %v", err)
			}
		}
	}
	if points == 0 {
		t.Error("no response was read on a calibration point")
	}
}

// TestNumbers_openDelegationBasis: a fast delegation of an open answer,
// over a router that keeps reputation and before any outcome, reads its
// map at consensus.Conservative, the Posterior of its one answer, and
// states the plurality's posterior of its groups, the lone run's
// reliability, which is above that Posterior (docs/INTERFACE.md, 9.3).
func TestNumbers_openDelegationBasis(t *testing.T) {
	s := numbersService(t, panels()[0], true)
	resp, err := s.Call(context.Background(), numbersRequest(trust.ModeDelegation, trust.PolicyFast, false))
	if err != nil {
		t.Fatal(err)
	}
	c, pl := resp.Evidence.Calibration, resp.Evidence.Plurality
	if c == nil || pl == nil {
		t.Fatalf("calibration %+v, plurality %+v; want both", c, pl)
	}
	post := consensus.Posterior(1, 0)
	ppa := consensus.PluralityPosteriorAt(pl.Groups, 0, pl.Coincidence, pl.Reliability)
	want := []float64{post, ppa, ppa}
	if d := cmp.Diff(want, []float64{c.Uncalibrated, c.Conservative, resp.Confidence}, exact); d != "" {
		t.Errorf("uncalibrated, conservative, confidence (-want +got):\n%s", d)
	}
	if !(resp.Confidence > post) {
		t.Errorf("confidence %v, want above Posterior(1, 0) = %v", resp.Confidence, post)
	}
}
