package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

const (
	valid   = router.VerdictValid
	invalid = router.VerdictInvalid
)

// Labels, for verdict lists.
var (
	lV = router.Label(router.VerdictValid)
	lI = router.Label(router.VerdictInvalid)
	lR = router.Label(router.VerdictRetry)
	lE = router.LabelError
	lT = router.LabelTimeout
	lC = router.LabelCancelled
)

func validateV3(replicas int, policy router.DisagreementPolicy) *router.ValidateV3Request {
	return &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{
			RequestID: "req-3",
			Claim:     router.Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)},
		},
		Consensus: router.ConsensusRequest{Replicas: replicas, DisagreementPolicy: policy},
	}
}

// sessionsOf returns the session ids of runs, in replica order.
func sessionsOf(runs []router.Run) []router.SessionID {
	ids := make([]router.SessionID, len(runs))
	for i, r := range runs {
		ids[i] = r.SessionID
	}
	return ids
}

func labelsOf(runs []router.Run) []router.Label {
	ls := make([]router.Label, len(runs))
	for i, r := range runs {
		ls[i] = r.Label
	}
	return ls
}

var (
	errDown = errors.New("worker down")
	// lateValid answers VALID after the instant workers have voted, so
	// that an early quorum cannot hide their votes. The delay orders the
	// votes; no test asserts a duration.
	lateValid   = late{routertest.Slow(routertest.Verdict(valid), 100*time.Millisecond)}
	lateInvalid = late{routertest.Slow(routertest.Verdict(invalid), 100*time.Millisecond)}
)

// late marks a worker that answers after a delay.
type late struct{ router.Worker }

// hasLate reports whether ws holds a late worker.
func hasLate(ws []router.Worker) bool {
	for _, w := range ws {
		if _, ok := w.(late); ok {
			return true
		}
	}
	return false
}

// TestEngine_ValidateV3_section7 runs every row of section 7 of the spec
// under each disagreement policy. Replica i runs on session i+1 (a fresh
// engine, sessions in distinct pools, so no rotation yet).
func TestEngine_ValidateV3_section7(t *testing.T) {
	V, I := routertest.Verdict(valid), routertest.Verdict(invalid)
	E, H := routertest.Fail(errDown), routertest.Hang()
	R := routertest.Verdict(router.VerdictRetry)
	type want struct {
		verdict    router.Verdict
		verdicts   []router.Label
		agreement  float64
		confidence float64
		low        bool
		status     int // non-zero: the call fails with this status
		code       router.Code
	}
	tests := []struct {
		name     string
		workers  []router.Worker
		policy   router.DisagreementPolicy
		negative bool // failures count as negative evidence
		want     want
	}{
		// Replicas agree.
		{"agree/return_all", []router.Worker{V, V, V}, router.DisagreeReturnAll, false,
			want{verdict: valid, verdicts: []router.Label{lV, lV, lV}, agreement: 1, confidence: 15.0 / 16}},
		{"agree/fail_hard", []router.Worker{V, V, V}, router.DisagreeFailHard, false,
			want{verdict: valid, verdicts: []router.Label{lV, lV, lV}, agreement: 1, confidence: 15.0 / 16}},
		{"agree/single replica", []router.Worker{V}, router.DisagreeBestEffort, false,
			want{verdict: valid, verdicts: []router.Label{lV}, agreement: 1, confidence: 3.0 / 4}},
		// Replicas disagree.
		{"disagree/best_effort", []router.Worker{lateValid, lateValid, I}, router.DisagreeBestEffort, false,
			want{verdict: valid, verdicts: []router.Label{lV, lV, lI}, agreement: 2.0 / 3, confidence: 11.0 / 16, low: true}},
		{"disagree/return_all", []router.Worker{V, V, I}, router.DisagreeReturnAll, false,
			want{verdict: valid, verdicts: []router.Label{lV, lV, lI}, agreement: 2.0 / 3, confidence: 11.0 / 16, low: true}},
		{"disagree/fail_hard", []router.Worker{V, I, lateValid}, router.DisagreeFailHard, false,
			want{status: http.StatusConflict, code: "disagreement"}},
		{"retry wins/return_all", []router.Worker{R, R, V}, router.DisagreeReturnAll, false,
			want{verdict: router.VerdictRetry, verdicts: []router.Label{lR, lR, lV}, agreement: 2.0 / 3, confidence: 11.0 / 16, low: true}},
		// No majority: a tie between VALID and INVALID. INVALID comes last,
		// so that the outcome stays open until every replica has voted.
		{"tie/best_effort", []router.Worker{V, lateInvalid, E}, router.DisagreeBestEffort, false,
			want{verdict: invalid, verdicts: []router.Label{lV, lI, lE}, agreement: 1.0 / 2, confidence: 1.0 / 2, low: true}},
		{"tie/return_all", []router.Worker{V, I, E}, router.DisagreeReturnAll, false,
			want{verdict: "", verdicts: []router.Label{lV, lI, lE}, agreement: 1.0 / 2, confidence: 1.0 / 2, low: true}},
		{"tie/fail_hard", []router.Worker{V, I, E}, router.DisagreeFailHard, false,
			want{status: http.StatusConflict, code: "disagreement"}},
		// All replicas fail.
		{"all fail/best_effort", []router.Worker{E, E, E}, router.DisagreeBestEffort, false,
			want{status: http.StatusBadGateway, code: "all_replicas_failed"}},
		{"all fail/fail_hard", []router.Worker{E, E, E}, router.DisagreeFailHard, false,
			want{status: http.StatusBadGateway, code: "all_replicas_failed"}},
		{"all fail/return_all", []router.Worker{E, E, E}, router.DisagreeReturnAll, false,
			want{verdict: "", verdicts: []router.Label{lE, lE, lE}, low: true}},
		{"all time out/best_effort", []router.Worker{H, H, H}, router.DisagreeBestEffort, false,
			want{status: http.StatusGatewayTimeout, code: "timeout"}},
		{"all time out/return_all", []router.Worker{H, H, H}, router.DisagreeReturnAll, false,
			want{verdict: "", verdicts: []router.Label{lT, lT, lT}, low: true}},
		// Some replicas time out: non-votes.
		{"some time out/best_effort", []router.Worker{V, H, H}, router.DisagreeBestEffort, false,
			want{verdict: valid, verdicts: []router.Label{lV, lT, lT}, agreement: 1, confidence: 3.0 / 4, low: true}},
		{"some time out/return_all", []router.Worker{V, H, H}, router.DisagreeReturnAll, false,
			want{verdict: valid, verdicts: []router.Label{lV, lT, lT}, agreement: 1, confidence: 3.0 / 4, low: true}},
		{"some time out/fail_hard", []router.Worker{V, H, H}, router.DisagreeFailHard, false,
			want{verdict: valid, verdicts: []router.Label{lV, lT, lT}, agreement: 1, confidence: 3.0 / 4, low: true}},
		{"two of five time out/best_effort", []router.Worker{V, V, I, H, H}, router.DisagreeBestEffort, false,
			want{verdict: valid, verdicts: []router.Label{lV, lV, lI, lT, lT}, agreement: 2.0 / 3, confidence: 11.0 / 16, low: true}},
		// Some replicas time out: negative evidence.
		{"some time out, negative/best_effort", []router.Worker{V, H, H}, router.DisagreeBestEffort, true,
			want{status: http.StatusConflict, code: "disagreement"}},
		{"some time out, negative/return_all", []router.Worker{V, H, H}, router.DisagreeReturnAll, true,
			want{verdict: "", verdicts: []router.Label{lV, lT, lT}, low: true}},
		{"two of five time out, negative/best_effort", []router.Worker{V, V, I, H, H}, router.DisagreeBestEffort, true,
			want{status: http.StatusConflict, code: "disagreement"}},
		{"some time out, negative/fail_hard", []router.Worker{V, H, H}, router.DisagreeFailHard, true,
			want{status: http.StatusConflict, code: "disagreement"}},
		{"one times out, negative/return_all", []router.Worker{V, H, V}, router.DisagreeReturnAll, true,
			want{verdict: valid, verdicts: []router.Label{lV, lT, lV}, agreement: 2.0 / 3, confidence: 11.0 / 16, low: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			opts := []router.EngineOption{}
			if tt.negative {
				opts = append(opts, router.WithFailureMode(consensus.FailuresNegative))
			}
			e := newEngine(t, routertest.Sessions(1, len(tt.workers), tt.workers...), opts...)
			req := validateV3(len(tt.workers), tt.policy)
			req.Policy.TimeoutMS = 30 // for the hanging workers
			if hasLate(tt.workers) {
				req.Policy.TimeoutMS = 5000
			}
			got, err := e.ValidateV3(context.Background(), req)
			if tt.want.status != 0 {
				p := asError(t, err, tt.want.status, tt.want.code)
				var extra struct {
					Runs      []router.Run             `json:"runs"`
					Consensus router.ConsensusResponse `json:"consensus"`
				}
				if err := json.Unmarshal(p.Extra, &extra); err != nil {
					t.Fatalf("Extra %s: %v", p.Extra, err)
				}
				if len(extra.Runs) != len(tt.workers) || extra.Consensus.Replicas != len(tt.workers) ||
					!cmp.Equal(labelsOf(extra.Runs), extra.Consensus.Verdicts) {
					t.Errorf("Extra = %s, want every run and a consensus block whose verdicts match them", p.Extra)
				}
				return
			}
			if err != nil {
				t.Fatalf("ValidateV3: %v", err)
			}
			wantBlock := router.ConsensusResponse{
				Replicas: len(tt.workers), Agreement: tt.want.agreement, Verdicts: tt.want.verdicts,
				Strategy: router.AggregationMajority, Confidence: tt.want.confidence, LowConfidence: tt.want.low,
			}
			if tt.negative {
				wantBlock.Failures = consensus.FailuresNegative
			}
			if diff := cmp.Diff(wantBlock, got.Consensus, cmpopts.EquateApprox(0, 1e-9), cmpopts.IgnoreFields(router.ConsensusResponse{}, "Agreeing")); diff != "" {
				t.Errorf("consensus block (-want +got):\n%s", diff)
			}
			// Agreement follows from the replicas that agreed and the
			// verdicts.
			if a := got.Consensus.Agreeing; tt.want.agreement > 0 {
				against := 0
				for i, l := range got.Consensus.Verdicts {
					if cast := l != lC && l != lE && l != lT; (cast || tt.negative && l != lC) && !slices.Contains(a, i) {
						against++
					}
				}
				if r := float64(len(a)) / float64(len(a)+against); math.Abs(r-tt.want.agreement) > 1e-9 {
					t.Errorf("agreeing replicas %v with verdicts %v give agreement %v, want %v", a, got.Consensus.Verdicts, r, tt.want.agreement)
				}
			} else if len(a) != 0 {
				t.Errorf("agreeing replicas %v without a winner", a)
			}
			if got.Verdict != tt.want.verdict {
				t.Errorf("verdict = %q, want %q", got.Verdict, tt.want.verdict)
			}
			wantConfidence := tt.want.confidence
			if tt.want.verdict == "" {
				wantConfidence = 0
			}
			if math.Abs(got.Confidence-wantConfidence) > 1e-9 {
				t.Errorf("confidence = %v, want %v", got.Confidence, wantConfidence)
			}
			if !cmp.Equal(labelsOf(got.Evidence.Runs), got.Consensus.Verdicts) {
				t.Errorf("run labels %v differ from consensus verdicts %v", labelsOf(got.Evidence.Runs), got.Consensus.Verdicts)
			}
			if want := []router.SessionID{1, 2, 3, 4, 5}[:len(tt.workers)]; !cmp.Equal(sessionsOf(got.Evidence.Runs), want) {
				t.Errorf("sessions %v, want %v", sessionsOf(got.Evidence.Runs), want)
			}
			for i, r := range got.Evidence.Runs {
				if r.Replica != i || r.TaskID == "" || (r.Label == lE || r.Label == lT) && r.Error == "" {
					t.Errorf("run %d = %+v, want its index, a task id, and an error when it failed", i, r)
				}
			}
		})
	}
}

func TestEngine_ValidateV3_reasonsOfTheWinners(t *testing.T) {
	w := func(v router.Verdict, reasons ...string) router.Worker {
		return routertest.Fixed(router.Result{Verdict: v, Confidence: 1, Reasons: reasons})
	}
	e := newEngine(t, routertest.Sessions(1, 3, w(valid, "a", "b"), w(invalid, "x"), w(valid, "b", "c")))
	got, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeReturnAll))
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, got.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	wantScores := []router.Score{{Name: "agreement", Value: 2.0 / 3}, {Name: "confidence", Value: 11.0 / 16}}
	if diff := cmp.Diff(wantScores, got.Evidence.Scores, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if got.RequestID != "req-3" {
		t.Errorf("request_id = %q, want the request's", got.RequestID)
	}
}

func TestEngine_ValidateV3_workerFaultsAreVotes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	garbage := routertest.Fixed(router.Result{Verdict: "SURE"})
	e := newEngine(t, routertest.Sessions(1, 5,
		routertest.Verdict(valid), routertest.Panic("boom"), garbage, routertest.Verdict(valid), lateValid))
	got, err := e.ValidateV3(context.Background(), validateV3(5, router.DisagreeReturnAll))
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	if want := []router.Label{lV, lE, lE, lV, lV}; !cmp.Equal(got.Consensus.Verdicts, want) {
		t.Errorf("verdicts = %v, want %v", got.Consensus.Verdicts, want)
	}
	if got.Verdict != valid {
		t.Errorf("verdict = %s, want VALID (3 of the 3 answers)", got.Verdict)
	}
}

// TestEngine_simulation runs 3,000 validate calls for each replica count,
// whose workers each give the wrong verdict one time in five. Majority
// accuracy must match the binomial value within four standard deviations:
// 3 replicas are right with probability 1 - 3(0.2²)(0.8) - 0.2³ = 0.896,
// 5 replicas with 0.94208. At 3,000 calls four standard deviations are
// ±0.022 and ±0.017, so the check still tells a majority from a single
// vote (0.8, 17 and 33 standard deviations away) and 5 replicas from 3
// (0.046 apart, 8 and 11 standard deviations).
func TestEngine_simulation(t *testing.T) {
	const calls = 3000
	for _, tt := range []struct {
		replicas int
		p        float64
	}{{3, 0.896}, {5, 0.94208}} {
		t.Run(fmt.Sprint(tt.replicas), func(t *testing.T) {
			honest := routertest.Verdict(valid)
			workers := make([]router.Worker, tt.replicas)
			for i := range workers {
				workers[i] = routertest.Mix(honest, routertest.Lie(honest), 0.2, uint64(i+1))
			}
			e := newEngine(t, routertest.Sessions(1, tt.replicas, workers...))
			right := 0
			for range calls {
				got, err := e.ValidateV3(context.Background(), validateV3(tt.replicas, router.DisagreeBestEffort))
				if err != nil {
					t.Fatalf("ValidateV3: %v", err)
				}
				if got.Verdict == valid {
					right++
				}
			}
			acc := float64(right) / calls
			sd := math.Sqrt(tt.p * (1 - tt.p) / calls)
			if math.Abs(acc-tt.p) > 4*sd {
				t.Errorf("accuracy %.4f, want %.4f ± %.4f", acc, tt.p, 4*sd)
			}
		})
	}
}
