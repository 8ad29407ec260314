package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
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

// TestEngine_earlyQuorum asserts early quorum by what the straggling
// workers observe: their context is cancelled, and the call returns once
// they have returned.
func TestEngine_earlyQuorum(t *testing.T) {
	for _, straggler := range []struct {
		name string
		w    router.Worker
	}{{"hang", routertest.Hang()}, {"slow", routertest.Slow(routertest.Verdict(invalid), time.Hour)}} {
		t.Run(straggler.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			a, b := routertest.NewRecorder(straggler.w), routertest.NewRecorder(straggler.w)
			V := routertest.Verdict(valid)
			e := newEngine(t, routertest.Sessions(1, 5, V, a, V, b, V))
			got, err := e.ValidateV3(context.Background(), validateV3(5, router.DisagreeBestEffort))
			if err != nil {
				t.Fatalf("ValidateV3: %v", err)
			}
			if got.Verdict != valid {
				t.Errorf("verdict = %s, want VALID", got.Verdict)
			}
			if want := []router.Label{lV, lC, lV, lC, lV}; !cmp.Equal(got.Consensus.Verdicts, want) {
				t.Errorf("verdicts = %v, want %v", got.Consensus.Verdicts, want)
			}
			for i, r := range []*routertest.Recorder{a, b} {
				if r.Calls.Load() != 1 || r.Cancelled.Load() != 1 || r.Returned.Load() != 1 {
					t.Errorf("straggler %d: calls %d, cancelled %d, returned %d; want 1, 1, 1",
						i, r.Calls.Load(), r.Cancelled.Load(), r.Returned.Load())
				}
			}
			// 3 of 5 agreeing, 2 cut short before they answered: no vote
			// and no dissent, so unanimity among those that answered reads
			// as agreement 1 and scores like a unanimous 3.
			if got.Consensus.LowConfidence || got.Consensus.Agreement != 1 || got.Consensus.Confidence != 15.0/16 || got.Confidence != 15.0/16 {
				t.Errorf("consensus = %+v, want agreement 1, confidence 15/16, without low confidence", got.Consensus)
			}
		})
	}
}

func TestEngine_failHardStopsAtTheFirstDisagreement(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	straggler := routertest.NewRecorder(routertest.Hang())
	e := newEngine(t, routertest.Sessions(1, 3, routertest.Verdict(valid), routertest.Verdict(invalid), straggler))
	_, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeFailHard))
	p := asError(t, err, http.StatusConflict, "disagreement")
	if got := labelsOf(errorRuns(t, p)); !cmp.Equal(got, []router.Label{lV, lI, lC}) {
		t.Errorf("run labels = %v, want VALID, INVALID, CANCELLED", got)
	}
	if straggler.Cancelled.Load() != 1 {
		t.Errorf("straggler observed %d cancellations, want 1", straggler.Cancelled.Load())
	}
}

func TestEngine_ValidateV3_callerCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	recs := []*routertest.Recorder{
		routertest.NewRecorder(routertest.Hang()),
		routertest.NewRecorder(routertest.Hang()),
		routertest.NewRecorder(routertest.Hang()),
	}
	e := newEngine(t, routertest.Sessions(1, 3, recs[0], recs[1], recs[2]))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for recs[0].Calls.Load()+recs[1].Calls.Load()+recs[2].Calls.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	for i, r := range recs {
		if r.Cancelled.Load() != 1 || r.Returned.Load() != 1 {
			t.Errorf("worker %d: cancelled %d, returned %d; want 1, 1", i, r.Cancelled.Load(), r.Returned.Load())
		}
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

// TestEngine_selection checks which sessions a version 3 call runs on.
func TestEngine_selection(t *testing.T) {
	V := routertest.Verdict(valid)
	pooled := func(pools ...string) []router.Session {
		s := make([]router.Session, len(pools))
		for i, p := range pools {
			s[i] = router.Session{ID: router.SessionID(i + 1), Worker: V, Pool: p}
		}
		return s
	}
	tests := []struct {
		name     string
		sessions []router.Session
		first    router.SessionID
		pool     []router.SessionID
		tier     router.Tier
		replicas int
		want     [][]router.SessionID // sessions of successive calls
	}{
		{"rotates over every session", pooled("", "", "", ""), 0, nil, "", 1,
			[][]router.SessionID{{1}, {2}, {3}, {4}, {1}}},
		{"distinct pools first", pooled("a", "a", "a", "b", "b", "c"), 0, nil, "", 3,
			[][]router.SessionID{{1, 4, 6}, {2, 4, 6}, {3, 4, 6}, {4, 6, 1}, {5, 6, 1}, {6, 1, 4}}},
		{"then any pool", pooled("a", "a", "a", "b"), 0, nil, "", 3,
			[][]router.SessionID{{1, 4, 2}, {2, 4, 3}, {3, 4, 1}, {4, 1, 2}}},
		{"session pool in its order", pooled("", "", "", "", "", ""), 0, []router.SessionID{6, 2, 4}, "", 3,
			[][]router.SessionID{{6, 2, 4}, {2, 4, 6}}},
		{"session_id first", pooled("", "", "", ""), 3, nil, "", 3,
			[][]router.SessionID{{3, 1, 2}, {3, 2, 4}, {3, 4, 1}, {3, 1, 2}}},
		{"session_id outside the pool", pooled("", "", "", ""), 4, []router.SessionID{1, 2}, "", 3,
			[][]router.SessionID{{4, 1, 2}}},
		{"tier", []router.Session{
			{ID: 1, Worker: V, Tiers: []router.Tier{router.TierFast}},
			{ID: 2, Worker: V, Tiers: []router.Tier{router.TierSafe, router.TierOracle}},
			{ID: 3, Worker: V},
			{ID: 4, Worker: V, Tiers: []router.Tier{router.TierSafe}},
		}, 0, nil, router.TierSafe, 3, [][]router.SessionID{{2, 3, 4}, {3, 4, 2}}},
		{"session_id off tier is dropped", []router.Session{
			{ID: 1, Worker: V, Tiers: []router.Tier{router.TierFast}},
			{ID: 2, Worker: V},
		}, 1, nil, router.TierSafe, 1, [][]router.SessionID{{2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.sessions, router.WithReputation(nil)) // rotation, as before reputation
			for call, want := range tt.want {
				req := validateV3(tt.replicas, router.DisagreeReturnAll)
				req.SessionID, req.Consensus.SessionPool, req.Policy.Tier = tt.first, tt.pool, tt.tier
				got, err := e.ValidateV3(context.Background(), req)
				if err != nil {
					t.Fatalf("call %d: %v", call, err)
				}
				if ids := sessionsOf(got.Evidence.Runs); !cmp.Equal(ids, want) {
					t.Errorf("call %d ran on sessions %v, want %v", call, ids, want)
				}
			}
		})
	}
}

func TestEngine_selectionErrors(t *testing.T) {
	recs := []*routertest.Recorder{
		routertest.NewRecorder(routertest.Verdict(valid)),
		routertest.NewRecorder(routertest.Verdict(valid)),
	}
	sessions := []router.Session{
		{ID: 1, Worker: recs[0], Tiers: []router.Tier{router.TierFast}},
		{ID: 2, Worker: recs[1]},
	}
	e := newEngine(t, sessions)
	ctx := context.Background()
	tests := []struct {
		name   string
		req    func(*router.ValidateV3Request)
		status int
		code   router.Code
		fields []string
	}{
		{"unknown pool ids", func(r *router.ValidateV3Request) { r.Consensus.SessionPool = []router.SessionID{2, 7, 1, 8} },
			http.StatusBadRequest, "invalid_request", []string{"consensus.session_pool[1]", "consensus.session_pool[3]"}},
		{"unknown session_id", func(r *router.ValidateV3Request) { r.SessionID = 5 },
			http.StatusBadRequest, "invalid_request", []string{"session_id"}},
		{"more replicas than sessions", func(r *router.ValidateV3Request) { r.Consensus.Replicas = 3 },
			http.StatusServiceUnavailable, "insufficient_sessions", nil},
		{"too few serve the tier", func(r *router.ValidateV3Request) { r.Policy.Tier, r.Consensus.Replicas = router.TierSafe, 3 },
			http.StatusServiceUnavailable, "insufficient_sessions", nil},
		{"pool too small", func(r *router.ValidateV3Request) {
			r.Consensus.SessionPool, r.Consensus.Replicas = []router.SessionID{1, 2}, 3
		},
			http.StatusServiceUnavailable, "insufficient_sessions", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := validateV3(1, "")
			tt.req(req)
			_, err := e.ValidateV3(ctx, req)
			p := asError(t, err, tt.status, tt.code)
			if diff := cmp.Diff(tt.fields, fields(p)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
	if n := recs[0].Calls.Load() + recs[1].Calls.Load(); n != 0 {
		t.Errorf("workers called %d times by calls that failed selection, want 0", n)
	}
}

func TestEngine_selectionSkipsCoolingSessions(t *testing.T) {
	clk := newClock()
	bad := routertest.NewRecorder(routertest.Fail(errDown))
	good := routertest.NewRecorder(routertest.Verdict(valid))
	e := newEngine(t, []router.Session{{ID: 1, Worker: bad}, {ID: 2, Worker: good}, {ID: 3, Worker: good}},
		router.WithEngineClock(clk.Now), router.WithHealth(1, time.Minute))
	ctx := context.Background()
	if _, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll)); err != nil {
		t.Fatalf("first call: %v", err) // session 1 fails once and cools down
	}
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort))
	asError(t, err, http.StatusServiceUnavailable, "insufficient_sessions")
	for range 4 {
		got, err := e.ValidateV3(ctx, validateV3(1, router.DisagreeBestEffort))
		if err != nil {
			t.Fatalf("one replica: %v", err)
		}
		if id := got.Evidence.Runs[0].SessionID; id == 1 {
			t.Errorf("a call ran on session 1 while it cooled down")
		}
	}
	clk.Advance(time.Minute)
	if _, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort)); err != nil {
		t.Errorf("after the cooldown: %v", err)
	}
	if got := bad.Calls.Load(); got != 2 {
		t.Errorf("failing session called %d times, want 2 (before and after its cooldown)", got)
	}
}

func TestEngine_DelegateV3(t *testing.T) {
	step := func(s string) []router.Step { return []router.Step{{Description: s}} }
	a := routertest.Fixed(router.Result{Output: "hello  world", Steps: step("a"), Tools: []string{"t"}})
	b := routertest.Fixed(router.Result{Output: " hello world\n", Steps: step("b")})
	c := routertest.Fixed(router.Result{Output: "bye", Steps: step("c")})
	e := newEngine(t, routertest.Sessions(1, 3, c, a, b))
	req := &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "greet", Policy: router.Policy{Tier: router.TierSafe}},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	}
	got, err := e.DelegateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("DelegateV3: %v", err)
	}
	// Replicas 1 and 2 agree once white space is folded; the result is
	// the output of the group's first run, replica 1.
	if string(got.Result) != `"hello  world"` {
		t.Errorf("result = %s, want replica 1's output", got.Result)
	}
	if !cmp.Equal(got.Evidence.Steps, step("a")) || !cmp.Equal(got.Evidence.Tools, []string{"t"}) ||
		got.Evidence.Configuration.Tier != router.TierSafe {
		t.Errorf("evidence = %+v, want replica 1's steps, tools and configuration", got.Evidence)
	}
	if got.TaskID == "" || len(got.Evidence.Runs) != 3 || string(got.Evidence.Runs[0].Output) != `"bye"` {
		t.Errorf("response = %+v, want a task id and three runs with their outputs", got)
	}
	if want := []router.Label{router.LabelOK, router.LabelOK, router.LabelOK}; !cmp.Equal(got.Consensus.Verdicts, want) ||
		math.Abs(got.Consensus.Agreement-2.0/3) > 1e-9 || !got.Consensus.LowConfidence {
		t.Errorf("consensus = %+v, want three OK, agreement 2/3, low confidence", got.Consensus)
	}

	// A host key that sees every output as the same answer.
	e = newEngine(t, routertest.Sessions(1, 3, c, a, b), router.WithAnswerKey(func(any) (string, error) { return "", nil }))
	got, err = e.DelegateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("DelegateV3 with a host key: %v", err)
	}
	if got.Consensus.Agreement != 1 || string(got.Result) != `"bye"` {
		t.Errorf("with a key equating all: agreement %v, result %s; want 1 and replica 0's output", got.Consensus.Agreement, got.Result)
	}

	// A key that fails.
	e = newEngine(t, routertest.Sessions(1, 3, c, a, b), router.WithAnswerKey(func(any) (string, error) { return "", errors.New("bad") }))
	_, err = e.DelegateV3(context.Background(), req)
	asError(t, err, http.StatusInternalServerError, "internal")
}

func TestEngine_DelegateV3_noWinner(t *testing.T) {
	E := routertest.Fail(errDown)
	e := newEngine(t, routertest.Sessions(1, 3, E, E, E))
	req := &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "greet"},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	}
	got, err := e.DelegateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("DelegateV3: %v", err)
	}
	if string(got.Result) != "null" || got.Evidence.Steps == nil || !got.Consensus.LowConfidence {
		t.Errorf("response = %+v, want a null result, empty evidence lists, low confidence", got)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("response does not encode: %v", err)
	}
}

func TestEngine_Factcheck(t *testing.T) {
	T := routertest.Verdict(router.VerdictTrue)
	F := routertest.Verdict(router.VerdictFalse)
	rec := routertest.NewRecorder(T)
	e := newEngine(t, routertest.Sessions(1, 3, rec, routertest.Verdict(valid), F, T))
	req := &router.FactcheckRequest{
		Claim:     "water boils at 100 C at sea level",
		Consensus: router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	}
	got, err := e.Factcheck(context.Background(), req)
	if err != nil {
		t.Fatalf("Factcheck: %v", err)
	}
	// Session 2 answers VALID, which a fact check does not take: ERROR.
	want := []router.Label{router.Label(router.VerdictTrue), lE, router.Label(router.VerdictFalse)}
	if got.Verdict != "" || !cmp.Equal(got.Consensus.Verdicts, want) {
		t.Errorf("verdict %q, verdicts %v; want no verdict (a tie) and %v", got.Verdict, got.Consensus.Verdicts, want)
	}
	j := rec.Jobs()[0]
	if j.Kind != router.KindFactcheck || j.Statement != req.Claim || j.FactcheckMode != router.FactcheckStandard {
		t.Errorf("job = %+v, want a factcheck of the claim in standard mode", j)
	}

	req.Consensus.SessionPool = []router.SessionID{1, 3, 4}
	got, err = e.Factcheck(context.Background(), req)
	if err != nil {
		t.Fatalf("Factcheck: %v", err)
	}
	if got.Verdict != router.VerdictTrue {
		t.Errorf("verdict = %q, want TRUE (2 of 3)", got.Verdict)
	}
}

// TestEngine_simulation runs 10,000 validate calls whose workers each give
// the wrong verdict one time in five. Majority accuracy must match the
// binomial value within four standard deviations: 3 replicas are right
// with probability 1 - 3(0.2²)(0.8) - 0.2³ = 0.896, 5 replicas with
// 0.94208.
func TestEngine_simulation(t *testing.T) {
	const calls = 10000
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

// TestEngine_cancelledRunsLeaveHealthAlone checks that a run cut short by
// an early quorum neither counts as a failure nor clears earlier ones.
func TestEngine_cancelledRunsLeaveHealthAlone(t *testing.T) {
	V := routertest.Verdict(valid)
	flaky := routertest.NewRecorder(routertest.Sequence(routertest.Fail(errDown), routertest.Hang(), routertest.Fail(errDown)))
	e := newEngine(t, routertest.Sessions(1, 3, V, V, flaky), router.WithHealth(2, time.Hour))
	ctx := context.Background()
	for i, policy := range []router.DisagreementPolicy{router.DisagreeReturnAll, router.DisagreeBestEffort, router.DisagreeReturnAll} {
		if _, err := e.ValidateV3(ctx, validateV3(3, policy)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if flaky.Cancelled.Load() != 1 {
		t.Fatalf("the second call did not cancel the hanging run (cancelled %d)", flaky.Cancelled.Load())
	}
	// Two failures, with a cancelled run between them: session 3 cools.
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll))
	asError(t, err, http.StatusServiceUnavailable, "insufficient_sessions")
}

func TestEngine_FactcheckV1(t *testing.T) {
	T := routertest.Verdict(router.VerdictTrue)
	recs := []*routertest.Recorder{routertest.NewRecorder(T), routertest.NewRecorder(T), routertest.NewRecorder(T),
		routertest.NewRecorder(routertest.Hang()), routertest.NewRecorder(routertest.Hang())}
	ws := make([]router.Worker, len(recs))
	for i, r := range recs {
		ws[i] = r
	}
	e := newEngine(t, routertest.Sessions(1, 5, ws...))
	ctx := context.Background()

	req := &router.FactcheckV1Request{Claim: "water is wet", Mode: router.FactcheckRealtime, SessionPool: []router.SessionID{1, 2, 3}}
	got, err := e.FactcheckV1(ctx, req)
	if err != nil {
		t.Fatalf("FactcheckV1: %v", err)
	}
	if got.Verdict != router.VerdictTrue || got.Consensus.Replicas != 3 || len(got.Evidence.Runs) != 3 {
		t.Errorf("response %+v, want TRUE from 3 replicas (the default redundancy)", got)
	}
	j := recs[0].Jobs()[0]
	if j.Kind != router.KindFactcheck || j.Version != 1 || j.Statement != req.Claim || j.FactcheckMode != router.FactcheckRealtime {
		t.Errorf("job = %+v, want a version 1 factcheck of the claim in realtime mode", j)
	}

	// Redundancy 5: three answers decide, the two hung replicas are cut.
	req = &router.FactcheckV1Request{Claim: "c", Policy: router.ValidatePolicy{Redundancy: 5}}
	if got, err = e.FactcheckV1(ctx, req); err != nil {
		t.Fatalf("FactcheckV1 with redundancy 5: %v", err)
	}
	if got.Consensus.Replicas != 5 || got.Verdict != router.VerdictTrue {
		t.Errorf("response %+v, want TRUE from 5 replicas", got)
	}
	if j := recs[1].Jobs()[1]; j.FactcheckMode != router.FactcheckStandard {
		t.Errorf("mode %q, want standard when the request sets none", j.FactcheckMode)
	}

	// Errors name the members of a version 1 request.
	_, err = e.FactcheckV1(ctx, &router.FactcheckV1Request{Claim: "c", SessionPool: []router.SessionID{1, 9, 2}})
	if p := asError(t, err, http.StatusBadRequest, "invalid_request"); len(p.Errors) != 1 || p.Errors[0].Field != "session_pool[1]" {
		t.Errorf("unknown pool member: field errors %+v, want session_pool[1]", p.Errors)
	}
	_, err = e.FactcheckV1(ctx, &router.FactcheckV1Request{Claim: "c", SessionPool: []router.SessionID{1, 2}})
	if p := asError(t, err, http.StatusServiceUnavailable, "insufficient_sessions"); !strings.Contains(p.Detail, "session_pool") {
		t.Errorf("detail %q, want it to name session_pool", p.Detail)
	}
	if _, err := e.FactcheckV1(ctx, nil); err == nil {
		t.Error("FactcheckV1(nil) succeeded")
	}
}

func TestEngine_Status(t *testing.T) {
	clk := newClock()
	var failing atomic.Bool
	failing.Store(true)
	flaky := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if failing.Load() {
			return nil, errDown
		}
		return &router.Result{Verdict: valid}, nil
	})
	e := newEngine(t, []router.Session{
		{ID: 1, Worker: flaky, Pool: "a", Tiers: []router.Tier{router.TierSafe}},
		{ID: 2, Worker: routertest.Verdict(valid)},
	}, router.WithEngineClock(clk.Now), router.WithHealth(2, time.Minute))
	ctx := context.Background()
	health := func(want router.SessionStatus) {
		t.Helper()
		st, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Sessions) != 2 || st.Calls != nil {
			t.Fatalf("status %+v, want two sessions and no calls", st)
		}
		if diff := cmp.Diff(want, st.Sessions[0]); diff != "" {
			t.Errorf("session 1 (-want +got):\n%s", diff)
		}
		if s := st.Sessions[1]; s.ID != 2 || s.Health != router.HealthHealthy || s.Pool != "" || s.Tiers != nil {
			t.Errorf("session 2 = %+v, want healthy, no pool, every tier", s)
		}
	}
	one := &router.ValidateV2Request{SessionID: 1}
	one.Claim = router.Claim{Type: "t", Output: json.RawMessage(`1`)}
	base := router.SessionStatus{ID: 1, Pool: "a", Tiers: []router.Tier{router.TierSafe}}

	want := base
	want.Health = router.HealthHealthy
	health(want)
	e.ValidateV2(ctx, one)
	want.Failures = 1
	health(want) // one failure is under the threshold
	e.ValidateV2(ctx, one)
	want.Health, want.Failures, want.CoolingUntil = router.HealthCoolingDown, 2, clk.Now().Add(time.Minute).UTC()
	health(want)
	clk.Advance(time.Minute)
	want.Health, want.CoolingUntil = router.HealthHalfOpen, time.Time{}
	health(want)
	failing.Store(false)
	if _, err := e.ValidateV2(ctx, one); err != nil {
		t.Fatalf("half-open session: %v", err)
	}
	want.Health, want.Failures = router.HealthHealthy, 0
	health(want)
}

// TestEngine_ValidateV3_lateDissent releases the deciding VALID and a
// dissenting INVALID at the same instant, a hundred times. Whichever the
// runner reads first, the dissent answered: it keeps its label, reasons
// and confidence (it is never relabelled CANCELLED) and counts against
// the winner. With honest accounting the figures no longer depend on the
// order of arrival, so the row is deterministic without arranging for
// the deciding vote to come last.
func TestEngine_ValidateV3_lateDissent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for range 100 {
		gate := make(chan struct{})
		gated := func(v router.Verdict) router.Worker {
			return router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
				<-gate
				return &router.Result{Verdict: v, Confidence: 0.7, Reasons: []string{"said " + string(v)}}, nil
			})
		}
		first := router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
			defer close(gate) // the other two answer once this one has
			return &router.Result{Verdict: valid, Confidence: 0.9}, nil
		})
		e := newEngine(t, routertest.Sessions(1, 3, first, gated(valid), gated(invalid)))
		got, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeBestEffort))
		if err != nil {
			t.Fatal(err)
		}
		if want := []router.Label{lV, lV, lI}; !cmp.Equal(got.Consensus.Verdicts, want) {
			t.Fatalf("verdicts %v, want %v", got.Consensus.Verdicts, want)
		}
		if r := got.Evidence.Runs[2]; r.Label != lI || r.Confidence != 0.7 || len(r.Reasons) != 1 || r.Error != "" {
			t.Fatalf("the dissent's run = %+v, want INVALID with its confidence and reasons", r)
		}
		if got.Verdict != valid || got.Consensus.Agreement != 2.0/3 || got.Confidence != 11.0/16 || !got.Consensus.LowConfidence {
			t.Fatalf("verdict %s, agreement %v, confidence %v, low %t; want VALID, 2/3, 11/16, true",
				got.Verdict, got.Consensus.Agreement, got.Confidence, got.Consensus.LowConfidence)
		}
	}
}
