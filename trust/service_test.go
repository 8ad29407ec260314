package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// scripted is a router.Service whose version 3 answers depend on the
// replica count asked for; it records every call.
type scripted struct {
	router.Service // unused operations panic, which a test would notice
	validate       map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error)
	delegate       map[int]func(*router.DelegateV3Request) (*router.DelegateV3Response, error)
	calls          []int
	sessions       []router.SessionID // of adaptive's one-session calls, in order
	bySession      map[router.SessionID]func(*router.ValidateV3Request) (*router.ValidateV3Response, error)
	mu             sync.Mutex
	traceIDs       []string
	variants       []router.Variant
	lastValidate   *router.ValidateV3Request
}

func (s *scripted) ValidateV3(ctx context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, req.Consensus.Replicas)
	if pool := req.Consensus.SessionPool; s.bySession != nil && req.Consensus.Replicas == 1 && len(pool) == 1 {
		s.sessions = append(s.sessions, pool[0])
		s.traceIDs = append(s.traceIDs, traceparent.From(ctx))
		// Sessions are tried in pool order (one call per service: no
		// rotation), so session n runs adaptive's run n-1.
		if want := adaptiveTier(int(pool[0]) - 1); req.Policy.Tier != want {
			return nil, fmt.Errorf("session %d asked for tier %q, want %q", pool[0], req.Policy.Tier, want)
		}
		return s.bySession[pool[0]](req)
	}
	s.traceIDs = append(s.traceIDs, traceparent.From(ctx))
	s.variants = append(s.variants, router.VariantFrom(ctx))
	s.lastValidate = req
	return s.validate[req.Consensus.Replicas](req)
}

func (s *scripted) DelegateV3(ctx context.Context, req *router.DelegateV3Request) (*router.DelegateV3Response, error) {
	s.calls = append(s.calls, req.Consensus.Replicas)
	return s.delegate[req.Consensus.Replicas](req)
}

// verdicts returns a validate answer whose replicas voted labels, each
// reporting confidence conf; the verdict is the majority's, if any.
func verdicts(conf float64, labels ...router.Label) func(*router.ValidateV3Request) (*router.ValidateV3Response, error) {
	return func(req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
		count := map[router.Label]int{}
		resp := &router.ValidateV3Response{Reasons: []string{"checked"}}
		for i, l := range labels {
			count[l]++
			resp.Evidence.Runs = append(resp.Evidence.Runs, router.Run{
				Replica: i, SessionID: router.SessionID(i + 1), TaskID: "t" + string(rune('a'+i)),
				Label: l, Confidence: conf, Reasons: []string{"because " + string(l)},
			})
		}
		best := 0
		for l, c := range count {
			if c > best && l != router.LabelTimeout && l != router.LabelError {
				best, resp.Verdict = c, router.Verdict(l)
			}
		}
		n := float64(len(labels))
		resp.Consensus = router.ConsensusResponse{
			Replicas: len(labels), Agreement: float64(best) / n, Verdicts: labels,
			Strategy: router.AggregationMajority, Confidence: float64(best+1) / (n + 2),
			LowConfidence: float64(best) < n,
		}
		resp.Confidence = resp.Consensus.Confidence
		return resp, nil
	}
}

func validation(policy Policy) *Request {
	return &Request{
		Mode:   ModeValidation,
		Policy: policy,
		Task: Task{
			Type:          "summary",
			Input:         router.NewStringInput("The Eiffel Tower is in Paris."),
			ClaimedResult: json.RawMessage(`"The tower is in Paris."`),
		},
	}
}

func TestService_Call_tiers(t *testing.T) {
	valid3 := verdicts(0.9, "VALID", "VALID", "VALID")
	tests := []struct {
		name       string
		policy     Policy
		script     map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error)
		wantCalls  []int
		wantStatus Status
		wantRetry  bool
	}{
		{"fast one replica", PolicyFast, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){1: verdicts(0.9, "VALID")}, []int{1}, StatusValid, false},
		{"safe three", PolicySafe, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){3: valid3}, []int{3}, StatusValid, false},
		{"safe invalid majority", PolicySafe, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){3: verdicts(0.9, "INVALID", "INVALID", "VALID")}, []int{3}, StatusInvalid, false},
		{"safe one answer is not enough", PolicySafe, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){3: verdicts(0.9, "VALID", "ERROR", "TIMEOUT")}, []int{3}, StatusRetry, true},
		{"oracle unanimous", PolicyOracle, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){5: verdicts(0.9, "VALID", "VALID", "VALID", "VALID", "VALID")}, []int{5}, StatusValid, false},
		{"retry verdict", PolicySafe, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){3: verdicts(0.9, "RETRY", "RETRY", "VALID")}, []int{3}, StatusRetry, true},
		{"needs spec", PolicySafe, map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){3: verdicts(0.9, "NEEDS_SPEC", "NEEDS_SPEC", "VALID")}, []int{3}, StatusNeedsSpec, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &scripted{validate: tt.script}
			s, err := New(rs)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.Call(context.Background(), validation(tt.policy))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if diff := cmp.Diff(tt.wantCalls, rs.calls); diff != "" {
				t.Errorf("replicas per router call (-want +got):\n%s", diff)
			}
			if resp.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s", resp.Status, tt.wantStatus)
			}
			if got := resp.RetryInstructions != nil; got != tt.wantRetry {
				t.Errorf("retry_instructions present = %v, want %v (%+v)", got, tt.wantRetry, resp.RetryInstructions)
			}
			spent := 0
			for _, n := range tt.wantCalls {
				spent += n
			}
			if resp.Evidence.Redundancy != spent || len(resp.Evidence.Steps) != len(tt.wantCalls) {
				t.Errorf("evidence: redundancy %d over %d steps, want %d over %d", resp.Evidence.Redundancy, len(resp.Evidence.Steps), spent, len(tt.wantCalls))
			}
			for i, st := range resp.Evidence.Steps {
				if want := i < len(tt.wantCalls)-1; st.Escalated != want {
					t.Errorf("step %d escalated = %v, want %v", i, st.Escalated, want)
				}
			}
			if resp.ServiceVersion != Version || !traceparent.Valid(resp.TraceID) {
				t.Errorf("service_version %q, trace_id %q", resp.ServiceVersion, resp.TraceID)
			}
			for _, id := range rs.traceIDs {
				if id != resp.TraceID {
					t.Errorf("router call carried trace id %q, response says %q", id, resp.TraceID)
				}
			}
		})
	}
}

func TestService_Call_arbitration(t *testing.T) {
	tests := []struct {
		labels []router.Label
		want   Status
	}{
		{[]router.Label{"VALID", "VALID", "INVALID"}, StatusSellerValid},
		{[]router.Label{"INVALID", "INVALID", "VALID"}, StatusSellerInvalid},
		{[]router.Label{"RETRY", "RETRY", "VALID"}, StatusInconclusive},
	}
	for _, tt := range tests {
		rs := &scripted{validate: map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){3: verdicts(0.9, tt.labels...)}}
		s, _ := New(rs)
		req := validation(PolicySafe)
		req.Mode = ModeArbitration
		req.Task.DisputeContext = json.RawMessage(`{"buyer":"the summary omits the city"}`)
		resp, err := s.Call(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != tt.want {
			t.Errorf("%v: status %s, want %s", tt.labels, resp.Status, tt.want)
		}
		if resp.RetryInstructions != nil {
			t.Errorf("%v: arbitration gave retry_instructions %+v", tt.labels, resp.RetryInstructions)
		}
		if got := rs.lastValidate.Context["dispute_context"]; got == nil {
			t.Errorf("router request lacks the dispute context: %+v", rs.lastValidate.Context)
		}
	}
}

func TestService_Call_oracleDisagreement(t *testing.T) {
	runs := []router.Run{{Replica: 0, SessionID: 4, Label: "VALID"}, {Replica: 1, SessionID: 5, Label: "INVALID", Reasons: []string{"wrong city"}}}
	extra, _ := json.Marshal(map[string]any{"runs": runs, "consensus": router.ConsensusResponse{Replicas: 5, Agreement: 0.2, Verdicts: []router.Label{"VALID", "INVALID", "CANCELLED", "CANCELLED", "CANCELLED"}}})
	p := problem.New(http.StatusConflict, problem.CodeDisagreement, "replicas disagree")
	p.Extra = extra
	rs := &scripted{validate: map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){
		5: func(req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
			if req.Consensus.DisagreementPolicy != router.DisagreeFailHard {
				t.Errorf("oracle asked for %q, want fail_hard", req.Consensus.DisagreementPolicy)
			}
			return nil, p
		}}}
	s, _ := New(rs)
	resp, err := s.Call(context.Background(), validation(PolicyOracle))
	if err != nil {
		t.Fatalf("a fail_hard disagreement must be an answer, got %v", err)
	}
	if resp.Status != StatusRetry || resp.RetryInstructions == nil || resp.RetryInstructions.Policy != PolicyOracle {
		t.Errorf("status %s, retry %+v; want RETRY with oracle", resp.Status, resp.RetryInstructions)
	}
	want := []Disagreement{{Replica: 0, SessionID: 4, Label: "VALID"}, {Replica: 1, SessionID: 5, Label: "INVALID", Reason: "wrong city"}}
	if diff := cmp.Diff(want, resp.Evidence.Disagreements); diff != "" {
		t.Errorf("disagreements (-want +got):\n%s", diff)
	}
}

func TestService_Call_routerErrorEndsCall(t *testing.T) {
	unavailable := problem.New(http.StatusServiceUnavailable, problem.CodeInsufficientSessions, "2 healthy sessions, 3 needed")
	rs := &scripted{validate: map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){
		3: func(*router.ValidateV3Request) (*router.ValidateV3Response, error) { return nil, unavailable },
	}}
	s, _ := New(rs)
	_, err := s.Call(context.Background(), validation(PolicySafe))
	if !errors.Is(err, unavailable) {
		t.Fatalf("err = %v, want the router's error", err)
	}

}

func TestService_Call_traceAndVariant(t *testing.T) {
	rs := &scripted{validate: map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){1: verdicts(0.9, "VALID")}}
	s, err := New(rs, WithVariant(router.VariantTrial))
	if err != nil {
		t.Fatal(err)
	}
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp, err := s.Call(traceparent.With(context.Background(), id), validation(PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	if resp.TraceID != id || rs.traceIDs[0] != id {
		t.Errorf("trace id: response %q, router call %q, want %q", resp.TraceID, rs.traceIDs[0], id)
	}
	if rs.variants[0] != router.VariantTrial {
		t.Errorf("router call variant %q, want trial", rs.variants[0])
	}
}

func TestService_Call_delegation(t *testing.T) {
	answer := func(labels ...router.Label) func(*router.DelegateV3Request) (*router.DelegateV3Response, error) {
		return func(req *router.DelegateV3Request) (*router.DelegateV3Response, error) {
			if req.Objective != "Summarize in one sentence." {
				t.Errorf("objective %q, want the spec", req.Objective)
			}
			ok := 0
			resp := &router.DelegateV3Response{TaskID: "task", Result: json.RawMessage(`"Paris."`)}
			for i, l := range labels {
				if l == router.LabelOK {
					ok++
				}
				resp.Evidence.Runs = append(resp.Evidence.Runs, router.Run{Replica: i, SessionID: router.SessionID(i + 1), Label: l})
			}
			n := float64(len(labels))
			resp.Consensus = router.ConsensusResponse{Replicas: len(labels), Agreement: float64(ok) / n, Verdicts: labels, Confidence: float64(ok+1) / (n + 2), LowConfidence: 2*ok <= len(labels)}
			return resp, nil
		}
	}
	tests := []struct {
		labels []router.Label
		want   Status
	}{
		{[]router.Label{"OK", "OK", "ERROR"}, StatusValid},
		{[]router.Label{"OK", "ERROR", "TIMEOUT"}, StatusRetry},
	}
	for _, tt := range tests {
		rs := &scripted{delegate: map[int]func(*router.DelegateV3Request) (*router.DelegateV3Response, error){3: answer(tt.labels...)}}
		s, _ := New(rs)
		resp, err := s.Call(context.Background(), &Request{
			Mode: ModeDelegation, Policy: PolicySafe,
			Task: Task{Type: "summarization", Input: router.NewStringInput("Paris is the capital of France."), Spec: json.RawMessage(`"Summarize in one sentence."`)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != tt.want || string(resp.Result) != `"Paris."` {
			t.Errorf("%v: status %s result %s, want %s with the result", tt.labels, resp.Status, resp.Result, tt.want)
		}
	}
}

func TestRequest_Validate(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want []problem.FieldError
	}{
		{"validation without claim", Request{Mode: ModeValidation, Policy: PolicySafe},
			[]problem.FieldError{{Field: "task.claimed_result", Rule: "required", Message: "is required in validation mode"}}},
		{"arbitration without dispute", Request{Mode: ModeArbitration, Policy: PolicySafe, Task: Task{ClaimedResult: json.RawMessage(`"x"`)}},
			[]problem.FieldError{{Field: "task.dispute_context", Rule: "required", Message: "is required in arbitration mode"}}},
		{"delegation without input", Request{Mode: ModeDelegation, Policy: PolicyFast},
			[]problem.FieldError{{Field: "task.input", Rule: "required", Message: "is required in delegation mode"}}},
		{"unknown policy", Request{Mode: ModeValidation, Policy: "turbo", Task: Task{ClaimedResult: json.RawMessage(`1`)}},
			[]problem.FieldError{{Field: "policy", Rule: "oneof", Message: "must be one of fast, safe, oracle, adaptive, got turbo"}}},
		{"no mode", Request{Policy: PolicyFast},
			[]problem.FieldError{{Field: "mode", Rule: "required", Message: "is required: one of delegation, validation, arbitration"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			var p *Error
			if !errors.As(err, &p) || p.Status != http.StatusBadRequest {
				t.Fatalf("err = %v, want a 400 *Error", err)
			}
			if diff := cmp.Diff(tt.want, p.Errors); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestService_Call_nilRequest(t *testing.T) {
	s, _ := New(&scripted{})
	_, err := s.Call(context.Background(), nil)
	var p *Error
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest {
		t.Errorf("Call(nil) = %v, want a 400 *Error", err)
	}
}

// one is the answer of a one-replica call on the session asked for:
// label, reported with confidence conf. ERROR and TIMEOUT are router
// errors, as the router gives them when its only replica fails.
func one(conf float64, label router.Label) func(*router.ValidateV3Request) (*router.ValidateV3Response, error) {
	return func(req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
		id := req.Consensus.SessionPool[0]
		switch label {
		case router.LabelError:
			return nil, problem.New(http.StatusBadGateway, problem.CodeAllReplicasFailed, "no replica answered")
		case router.LabelTimeout:
			return nil, problem.New(http.StatusGatewayTimeout, problem.CodeTimeout, "no replica answered in time")
		}
		return &router.ValidateV3Response{
			Verdict: router.Verdict(label), Confidence: conf, Reasons: []string{"because " + string(label)},
			Evidence: router.ValidateEvidence{Runs: []router.Run{{SessionID: id, TaskID: fmt.Sprint("t", id), Label: label, Confidence: conf,
				Reasons: []string{"because " + string(label)}}}},
			Consensus: router.ConsensusResponse{Replicas: 1, Agreement: 1, Verdicts: []router.Label{label}, Strategy: router.AggregationMajority, Confidence: 0.75},
		}, nil
	}
}

// TestService_Call_adaptive plays adaptive against five scripted
// sessions: every run is a one-replica call on a session not used
// before, every vote is pooled, and the call stops as consensus.Stop says.
func TestService_Call_adaptive(t *testing.T) {
	type script = map[router.SessionID]func(*router.ValidateV3Request) (*router.ValidateV3Response, error)
	V, I, E, T := router.Label("VALID"), router.Label("INVALID"), router.LabelError, router.LabelTimeout
	tests := []struct {
		name       string
		labels     []router.Label // of sessions 1 to 5
		conf       float64        // of the first session's answer
		wantRuns   int
		wantStatus Status
		wantCounts [3]int // answered, failed, disagreements
		wantConf   float64
		threshold  float64 // WithEscalationThreshold; 0 is the default
	}{
		{"settles at one sure answer", []router.Label{V, V, V, V, V}, 0.99, 1, StatusValid, [3]int{1, 0, 0}, 0.75, 0.98},
		{"one answer short of the threshold", []router.Label{V, V, V, V, V}, 0.97, 2, StatusValid, [3]int{2, 0, 0}, 7.0 / 8, 0.98},
		{"a sure answer alone is not enough by default", []router.Label{V, V, V, V, V}, 0.99, 2, StatusValid, [3]int{2, 0, 0}, 7.0 / 8, 0},
		{"two agreeing answers", []router.Label{V, V, V, V, V}, 0.9, 2, StatusValid, [3]int{2, 0, 0}, 7.0 / 8, 0},
		{"dissent adds two runs", []router.Label{I, V, V, V, I}, 0.5, 4, StatusValid, [3]int{4, 0, 1}, 13.0 / 16, 0},
		{"dissent after two", []router.Label{V, V, I, V, V}, 0.5, 2, StatusValid, [3]int{2, 0, 0}, 7.0 / 8, 0},
		{"a tie at five runs", []router.Label{I, V, V, I, E}, 0.5, 5, StatusRetry, [3]int{4, 1, 5}, 0.5, 0},
		{"3 of 5 at the cap", []router.Label{I, V, V, I, V}, 0.5, 5, StatusValid, [3]int{5, 0, 2}, 21.0 / 32, 0},
		{"escalation after a failed first run", []router.Label{E, V, V, I, I}, 0, 3, StatusValid, [3]int{2, 1, 1}, 7.0 / 8, 0},
		{"a timed-out first run", []router.Label{T, V, V, I, I}, 0, 3, StatusValid, [3]int{2, 1, 1}, 7.0 / 8, 0},
		{"a failed first batch", []router.Label{E, T, V, V, I}, 0, 4, StatusValid, [3]int{2, 2, 2}, 7.0 / 8, 0},
		{"never one answer alone", []router.Label{V, E, E, T, E}, 0.9, 5, StatusRetry, [3]int{1, 4, 5}, 0.75, 0},
		{"nothing answers", []router.Label{E, E, E, E, E}, 0, 5, StatusRetry, [3]int{0, 5, 5}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := script{}
			for i, l := range tt.labels {
				conf := 0.9
				if i == 0 {
					conf = tt.conf
				}
				sc[router.SessionID(i+1)] = one(conf, l)
			}
			rs := &scripted{bySession: sc}
			s, err := New(rs, WithSessionPool(1, 2, 3, 4, 5), WithEscalationThreshold(tt.threshold))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.Call(context.Background(), validation(PolicyAdaptive))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if len(rs.sessions) != tt.wantRuns || resp.Evidence.Launched != tt.wantRuns || resp.Evidence.Redundancy != tt.wantRuns ||
				len(resp.Evidence.Steps) != tt.wantRuns || len(resp.Evidence.Verdicts) != tt.wantRuns {
				t.Errorf("sessions %v, launched %d, redundancy %d, %d steps, verdicts %v; want %d runs",
					rs.sessions, resp.Evidence.Launched, resp.Evidence.Redundancy, len(resp.Evidence.Steps), resp.Evidence.Verdicts, tt.wantRuns)
			}
			seen := map[router.SessionID]bool{}
			for _, id := range rs.sessions {
				if seen[id] {
					t.Errorf("session %d ran twice (sessions %v)", id, rs.sessions)
				}
				seen[id] = true
			}
			if resp.Status != tt.wantStatus || (resp.RetryInstructions != nil) != (tt.wantStatus == StatusRetry) {
				t.Errorf("status %s, retry %+v; want %s", resp.Status, resp.RetryInstructions, tt.wantStatus)
			}
			got := [3]int{resp.Evidence.Answered, resp.Evidence.Failed, len(resp.Evidence.Disagreements)}
			if got != tt.wantCounts {
				t.Errorf("answered, failed, disagreements = %v, want %v (%+v)", got, tt.wantCounts, resp.Evidence.Disagreements)
			}
			if resp.Confidence != tt.wantConf {
				t.Errorf("confidence %v, want %v", resp.Confidence, tt.wantConf)
			}
			for i, st := range resp.Evidence.Steps {
				if st.Replicas != 1 || len(st.Sessions) != 1 {
					t.Errorf("step %d = %+v, want one replica on one session", i, st)
				}
			}
		})
	}
}

// TestService_Call_adaptiveProperties runs adaptive against every panel of
// five sessions whose answers are drawn from VALID, INVALID and ERROR:
// it never launches more than 5 runs, and its status is a function of the
// votes it collected, whatever order the sessions were tried in.
func TestService_Call_adaptiveProperties(t *testing.T) {
	labels := []router.Label{router.Label("VALID"), router.Label("INVALID"), router.LabelError}
	var panel [5]router.Label
	var walk func(i int)
	walk = func(i int) {
		if i < 5 {
			for _, l := range labels {
				panel[i] = l
				walk(i + 1)
			}
			return
		}
		sc := map[router.SessionID]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){}
		for j, l := range panel {
			sc[router.SessionID(j+1)] = one(0.9, l)
		}
		rs := &scripted{bySession: sc}
		s, _ := New(rs, WithSessionPool(1, 2, 3, 4, 5))
		resp, err := s.Call(context.Background(), validation(PolicyAdaptive))
		if err != nil {
			t.Fatalf("%v: %v", panel, err)
		}
		if n := resp.Evidence.Launched; n > 5 || n < 1 || n != len(rs.sessions) {
			t.Fatalf("%v: launched %d runs over sessions %v", panel, n, rs.sessions)
		}
		// The status follows from the votes collected alone.
		var valid, invalid int
		for _, l := range resp.Evidence.Verdicts {
			switch l {
			case router.Label("VALID"):
				valid++
			case router.Label("INVALID"):
				invalid++
			}
		}
		want := StatusRetry
		lead, against, st := max(valid, invalid), min(valid, invalid), StatusValid
		if invalid >= valid {
			st = StatusInvalid
		}
		if lead >= 2 && lead > against {
			want = st
		}
		if resp.Status != want {
			t.Fatalf("%v: status %s after verdicts %v, want %s", panel, resp.Status, resp.Evidence.Verdicts, want)
		}
		if !slices.Equal(resp.Evidence.Verdicts, panel[:resp.Evidence.Launched]) {
			t.Fatalf("%v: verdicts %v are not the first sessions' answers", panel, resp.Evidence.Verdicts)
		}
	}
	walk(0)
}
