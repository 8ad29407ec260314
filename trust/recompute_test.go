package trust_test

// Recomputation over loopback HTTP: randomized panels of fake sessions,
// every tier and mode, reputation on and off, and every figure of every
// response recomputed from its body alone (recompute_check_test.go); and
// the counts of a numeric delegation with answers that hold no number,
// recomputed with 9.2's recipe from the body alone.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// The flags -recompute.panels and -recompute.calls size the randomized
// run: that many seeded panels of seven or nine sessions, that many calls
// each. The defaults keep it a few seconds long; a wider run reads more
// shapes of panel.
var (
	recomputePanels = flag.Int("recompute.panels", 6, "seeded panels of TestRecompute_randomized")
	recomputeCalls  = flag.Int("recompute.calls", 32, "calls per panel of TestRecompute_randomized")
)

// reportMismatches fails t with each mismatch of a response (the first
// three of each field over the run, counted in seen) and its body.
func reportMismatches(t *testing.T, what string, raw []byte, bad mismatches, seen map[string]int) {
	t.Helper()
	for _, m := range bad {
		seen[m.field]++
		if seen[m.field] <= 3 {
			t.Errorf("%s: %s: %s\n  body: %s", what, m.field, m.detail, withoutReceipt(raw))
		}
	}
}

// TestRecompute_randomized posts randomized requests (validation,
// arbitration, text, numeric and judged delegations; fast, safe, oracle and
// adaptive) to panels of seven or nine sessions that answer, disagree, ask
// for a retry, fail, hang, answer slowly or after a cancellation, with
// reputation on and off, failures counted as negative evidence, an
// escalation threshold, and outcomes reported for half the calls (judged
// delegations' included); every response must recompute from its body.
func TestRecompute_randomized(t *testing.T) {
	if testing.Short() {
		t.Skip("drives hundreds of calls")
	}
	var mu sync.Mutex // guards seen and covered, which the panels share
	seen := map[string]int{}
	covered := map[string]int{}
	t.Run("panels", func(t *testing.T) {
		for panel := range *recomputePanels {
			t.Run(fmt.Sprint(panel), func(t *testing.T) {
				t.Parallel() // each panel its own engine and server
				pseen, pcovered := map[string]int{}, map[string]int{}
				recomputePanel(t, panel, pseen, pcovered)
				mu.Lock()
				defer mu.Unlock()
				for k, n := range pseen {
					seen[k] += n
				}
				for k, n := range pcovered {
					covered[k] += n
				}
			})
		}
	})
	for field, n := range seen {
		if n > 3 {
			t.Errorf("%s: %d mismatches in all", field, n)
		}
	}
	// The run must reach what it checks: every mode under every tier, and
	// runs cancelled, failed and without a vote, pluralities, judged
	// delegations (at oracle too), an arbitration that accepted a RETRY
	// winner and confidences calibrated on outcomes.
	for _, k := range []string{"cancelled", "failed", "no vote", "plurality", "outcomes", "judged", "judged oracle", "arbitration retry winner"} {
		if covered[k] == 0 {
			t.Errorf("no response with %s runs or figures (covered %v)", k, covered)
		}
	}
	for _, mode := range []string{"validation", "arbitration", "delegation"} {
		for _, policy := range []string{"fast", "safe", "oracle", "adaptive"} {
			if covered[mode+"/"+policy] == 0 {
				t.Errorf("no %s/%s response (covered %v)", mode, policy, covered)
			}
		}
	}
}

// recomputePanel runs the calls of the seeded panel panel, counting the
// mismatches of each field in seen and what the responses reach in
// covered.
func recomputePanel(t *testing.T, panel int, seen, covered map[string]int) {
	rng := rand.New(rand.NewPCG(uint64(panel), 7))
	behs := randomSessions(rng, 7+2*(panel%2)) // nine sessions serve a judged oracle
	repOn := panel%3 != 2
	var eopts []router.EngineOption
	var topts []trust.Option
	if panel%4 == 1 {
		eopts = append(eopts, router.WithFailureMode(consensus.FailuresNegative))
	}
	escalation := 0.0
	if panel%5 == 3 {
		escalation = 0.65
		topts = append(topts, trust.WithEscalationThreshold(escalation))
	}
	rig := newRecomputeRig(t, behs, repOn, eopts, topts...)
	rig.escalation = escalation
	modes := []string{"validation", "validation", "arbitration", "delegation", "delegation"}
	policies := []string{"fast", "safe", "oracle", "adaptive", "adaptive"}
	for i := range *recomputeCalls {
		mode, policy := modes[rng.IntN(len(modes))], policies[rng.IntN(len(policies))]
		numeric := mode == "delegation" && rng.IntN(2) == 0
		judged := mode == "delegation" && !numeric && rng.IntN(2) == 0
		c := recomputeRequest(mode, policy, numeric, judged)
		what := fmt.Sprintf("panel %d %v (reputation %v) call %d %s/%s numeric=%v judged=%v", panel, behs, repOn, i, mode, policy, numeric, judged)
		raw, resp, code := rig.post(c)
		if resp == nil {
			if !unservedNow(raw, code) {
				t.Errorf("%s: HTTP %d %.600s", what, code, raw)
			}
			covered["unserved"]++
			continue
		}
		ev := resp.Evidence
		covered[mode+"/"+policy]++
		for k, ok := range map[string]bool{"cancelled": ev.Cancelled > 0, "failed": ev.Failed > 0, "no vote": noVotes(ev) > 0,
			"plurality": ev.Plurality != nil, "outcomes": ev.Calibration != nil && ev.Calibration.Basis == "outcomes", "judged": judged && ev.Judging != nil,
			"judged oracle": judged && policy == "oracle" && ev.Judging != nil, "arbitration retry winner": arbitrationRetryWinner(c, resp)} {
			if ok {
				covered[k]++
			}
		}
		reportMismatches(t, what, raw, rig.check(c, resp), seen)
		// Report outcomes for half the calls, so calibration maps fill.
		if repOn && rng.IntN(2) == 0 {
			if err := reportOutcome(rig.svc, c, resp); err != nil {
				t.Errorf("%s: feedback: %v", what, err)
			}
		}
	}
}

// arbitrationRetryWinner reports whether resp answers an arbitration
// INCONCLUSIVE on a RETRY winner it accepted.
func arbitrationRetryWinner(c recomputeCall, resp *trust.Response) bool {
	l, ok := acceptedUnlisted(resp.Evidence)
	return c.mode == "arbitration" && resp.Status == trust.StatusInconclusive && ok && l == router.Label(router.VerdictRetry)
}

// reportOutcome reports the outcome of resp, a response to c, as its
// caller: a delegation right when it answered VALID red or 42, a claim
// VALID. It returns nil for a report the service may refuse: one on a call
// with no outcome to report (a validation or arbitration whose leading
// verdict is neither VALID nor INVALID, a delegation without a result),
// and one that stands though its exam found too few healthy sessions.
func reportOutcome(svc *trust.Service, c recomputeCall, resp *trust.Response) error {
	ctx := trust.WithCaller(context.Background(), "alice")
	var err error
	if c.mode == "delegation" {
		k := resultKey(resp.Result, c.numeric)
		err = svc.Feedback(ctx, resp.TraceID, resp.Status == trust.StatusValid && (k == "red" || k == "42"))
	} else {
		err = svc.FeedbackVerdict(ctx, resp.TraceID, router.VerdictValid)
	}
	undecided := c.mode != "delegation" && (resp.Status == trust.StatusRetry || resp.Status == trust.StatusNeedsSpec || resp.Status == trust.StatusInconclusive) ||
		c.mode == "delegation" && string(resp.Result) == "null"
	if undecided && errors.Is(err, trust.ErrUnknownCall) || errors.Is(err, trust.ErrExam) {
		return nil
	}
	return err
}

// unservedNow reports whether a non-200 answer is one a panel may give
// while its sessions fail: 502 when no replica answered, 504 when none
// answered in time, 503 when
// too few sessions are healthy for the tier, and 400 policy/servable when
// the sessions left cannot serve a judged delegation.
func unservedNow(raw []byte, code int) bool {
	var p struct {
		Code   string `json:"code"`
		Errors []struct {
			Field string `json:"field"`
			Rule  string `json:"rule"`
		} `json:"errors"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	switch code {
	case http.StatusBadGateway:
		return p.Code == "all_replicas_failed"
	case http.StatusGatewayTimeout:
		return p.Code == "timeout"
	case http.StatusServiceUnavailable:
		return p.Code == "insufficient_sessions"
	case http.StatusBadRequest:
		return len(p.Errors) == 1 && p.Errors[0].Field == "policy" && p.Errors[0].Rule == "servable"
	}
	return false
}

// TestRecompute_dissentOverHTTP: session 1 (INVALID) has won two
// disagreements against four sessions that say VALID; adaptive validations
// are answered by the dissent rule (9.2), and every figure recomputes.
func TestRecompute_dissentOverHTTP(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	behs := []fakeSession{{verdict: router.VerdictInvalid}, {verdict: router.VerdictValid}, {verdict: router.VerdictValid}, {verdict: router.VerdictValid}, {verdict: router.VerdictValid}}
	rig := newRecomputeRig(t, behs, true, []router.EngineOption{router.WithReputation(book)})
	scope := router.Scope(router.KindValidate, "qa")
	dissent := []reputation.Ballot{{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}}
	for range 2 {
		if err := book.Feedback(ctx, scope, dissent, false); err != nil {
			t.Fatal(err)
		}
	}
	seen, answered := map[string]int{}, 0
	for i := range 20 {
		c := recomputeRequest("validation", "adaptive", false, false)
		raw, resp := rig.mustPost(c)
		reportMismatches(t, fmt.Sprintf("call %d", i), raw, rig.check(c, resp), seen)
		if resp.Evidence.Dissent != nil {
			answered++
		}
	}
	if answered == 0 {
		t.Error("no call answered by the dissent rule")
	}
}

// TestRecompute_numericNoVoteAgreement: an adaptive numeric delegation
// whose first session answers "n/a" and the others 42. The run without a
// number counts in evidence.answered, with a disagreement whose reason
// begins "no vote:", so 9.2's recipe gives the votes v = answered less the
// no-vote runs, the agreeing runs a = agreement × v, and the number before
// calibration Posterior(a, v − a), which the confidence reads on its basis.
func TestRecompute_numericNoVoteAgreement(t *testing.T) {
	behs := []fakeSession{{num: "n/a"}, {num: 42}, {num: 42}, {num: 42}, {num: 42}}
	rig := newRecomputeRig(t, behs, true, nil)
	for range 10 {
		c := recomputeRequest("delegation", "adaptive", true, false)
		raw, resp := rig.mustPost(c)
		ev := resp.Evidence
		nov := noVotes(ev)
		if nov == 0 {
			continue // the session without a number did not run: the next call starts elsewhere
		}
		if nov != 1 || resp.Status != trust.StatusValid || resultKey(resp.Result, true) != "42" {
			t.Fatalf("%d no-vote runs, status %s, result %s; want 1, VALID, 42\n  body: %s", nov, resp.Status, resp.Result, withoutReceipt(raw))
		}
		v := ev.Answered - nov
		a := ev.Agreement * float64(v)
		if backers := ev.Answered - nov; a != float64(backers) || a < 2 {
			t.Errorf("9.2: a = agreement × v = %v × %d = %v; %d runs answered 42", ev.Agreement, v, a, backers)
		}
		ai := int(math.Round(a))
		b := ev.Calibration
		if b == nil {
			t.Fatalf("no calibration basis with reputation on\n  body: %s", withoutReceipt(raw))
		}
		if want := posteriorExact(ai, v-ai); !approxEqual(b.Uncalibrated, want) {
			t.Errorf("9.2: the number before calibration is Posterior(%d, %d) = %v; evidence.calibration.uncalibrated %v", ai, v-ai, want, b.Uncalibrated)
		}
		if want := readCalibration(b); !approxEqual(resp.Confidence, want) {
			t.Errorf("confidence %v; its basis reads %v", resp.Confidence, want)
		}
		if want := ai >= 2 && resp.Confidence > trust.DefaultPluralityFloor; !want {
			t.Errorf("9.2: a = %d, confidence %v predicts no VALID; the response is VALID", ai, resp.Confidence)
		}
		reportMismatches(t, "no-vote call", raw, rig.check(c, resp), map[string]int{})
		return
	}
	t.Fatal("no call ran the session without a number")
}

// TestRecompute_numericNoVoteStatus: one session answers 42 and four "n/a".
// The response states agreement 1 over 5 answered runs and a confidence
// above one half, yet one number backs the result: 9.2's recipe counts v =
// 5 − 4 = 1 vote, a = 1, and predicts RETRY, as the response answers.
func TestRecompute_numericNoVoteStatus(t *testing.T) {
	behs := []fakeSession{{num: "n/a"}, {num: 42}, {num: "n/a"}, {num: "n/a"}, {num: "n/a"}}
	rig := newRecomputeRig(t, behs, true, nil)
	c := recomputeRequest("delegation", "adaptive", true, false)
	raw, resp := rig.mustPost(c)
	ev := resp.Evidence
	v := ev.Answered - noVotes(ev)
	a := int(math.Round(ev.Agreement * float64(v)))
	if ev.Answered != 5 || v != 1 || a != 1 {
		t.Errorf("answered %d, v %d, a %d; want 5, 1, 1\n  body: %s", ev.Answered, v, a, withoutReceipt(raw))
	}
	predicted := trust.StatusRetry
	if a >= 2 && resp.Confidence > trust.DefaultPluralityFloor {
		predicted = trust.StatusValid
	}
	if resp.Status != predicted || predicted != trust.StatusRetry {
		t.Errorf("9.2: a = %d of v = %d, confidence %v: predicts %s; the response says %s (want RETRY)", a, v, resp.Confidence, predicted, resp.Status)
	}
	reportMismatches(t, "one number", raw, rig.check(c, resp), map[string]int{})
}
