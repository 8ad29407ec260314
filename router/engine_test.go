package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// clock is a fake clock for the engine's WithEngineClock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newEngine(t *testing.T, sessions []router.Session, opts ...router.EngineOption) *router.Engine {
	t.Helper()
	e, err := router.NewEngine(sessions, opts...)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

// one returns a one-session engine running w as session 1.
func one(t *testing.T, w router.Worker, opts ...router.EngineOption) *router.Engine {
	t.Helper()
	return newEngine(t, []router.Session{{ID: 1, Worker: w}}, opts...)
}

// asError returns err as an *router.Error with the wanted status and code.
func asError(t *testing.T, err error, status int, code router.Code) *router.Error {
	t.Helper()
	var p *router.Error
	if !errors.As(err, &p) {
		t.Fatalf("error = %v (%T), want a *router.Error", err, err)
	}
	if p.Status != status || p.Code != code {
		t.Fatalf("error = %d %s (%s), want %d %s", p.Status, p.Code, p.Detail, status, code)
	}
	return p
}

// fields returns the JSON paths an *Error names.
func fields(p *router.Error) []string {
	var f []string
	for _, e := range p.Errors {
		f = append(f, e.Field)
	}
	return f
}

// errorRuns decodes the runs an error carries in Extra.
func errorRuns(t *testing.T, p *router.Error) []router.Run {
	t.Helper()
	var extra struct {
		Runs []router.Run `json:"runs"`
	}
	if err := json.Unmarshal(p.Extra, &extra); err != nil {
		t.Fatalf("Extra %s: %v", p.Extra, err)
	}
	return extra.Runs
}

func validateV2(id router.SessionID) *router.ValidateV2Request {
	return &router.ValidateV2Request{
		SessionID: id,
		ValidateTask: router.ValidateTask{
			RequestID: "req-1",
			Claim:     router.Claim{Type: "summary", Description: "summarize", Output: json.RawMessage(`"a summary"`)},
			Policy:    router.ValidatePolicy{Tier: router.TierSafe, Rules: []string{"consistency"}},
		},
	}
}

func delegateV2(id router.SessionID) *router.DelegateV2Request {
	return &router.DelegateV2Request{
		SessionID: id,
		DelegateTask: router.DelegateTask{
			Objective: "add the numbers",
			Input:     router.NewStringInput("1 2 3"),
			Execution: router.Execution{Mode: router.ExecutionTools, Model: "auto", Tools: []string{"calc"}, MaxSteps: 3},
			Policy:    router.Policy{Tier: router.TierFast, TimeoutMS: 5000},
		},
	}
}

func TestNewEngine_rejects(t *testing.T) {
	ok := routertest.Verdict(router.VerdictValid)
	tests := []struct {
		name     string
		sessions []router.Session
		opts     []router.EngineOption
		want     error
	}{
		{"no sessions", nil, nil, router.ErrNoSessions},
		{"zero id", []router.Session{{ID: 0, Worker: ok}}, nil, router.ErrInvalidSession},
		{"negative id", []router.Session{{ID: -3, Worker: ok}}, nil, router.ErrInvalidSession},
		{"nil worker", []router.Session{{ID: 1}}, nil, router.ErrInvalidSession},
		{"duplicate id", []router.Session{{ID: 1, Worker: ok}, {ID: 1, Worker: ok}}, nil, router.ErrInvalidSession},
		{"adaptive tier", []router.Session{{ID: 1, Worker: ok, Tiers: []router.Tier{router.TierAdaptive}}}, nil, router.ErrInvalidSession},
		{"zero replica timeout", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithReplicaTimeout(0)}, router.ErrInvalidOption},
		{"negative call timeout", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithCallTimeout(-time.Second)}, router.ErrInvalidOption},
		{"negative grace", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithStopGrace(-1)}, router.ErrInvalidOption},
		{"negative max steps", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithMaxSteps(-1)}, router.ErrInvalidOption},
		{"zero threshold", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithHealth(0, time.Second)}, router.ErrInvalidOption},
		{"negative cooldown", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithHealth(1, -time.Second)}, router.ErrInvalidOption},
		{"unknown failure mode", []router.Session{{ID: 1, Worker: ok}}, []router.EngineOption{router.WithFailureMode("sometimes")}, router.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := router.NewEngine(tt.sessions, tt.opts...)
			if !errors.Is(err, tt.want) {
				t.Errorf("NewEngine error = %v, want %v", err, tt.want)
			}
			if e != nil {
				t.Errorf("NewEngine returned an engine with the error")
			}
		})
	}
}

func TestNewEngine_copiesSessions(t *testing.T) {
	sessions := []router.Session{{ID: 1, Worker: routertest.Verdict(router.VerdictValid), Tiers: []router.Tier{router.TierSafe}}}
	e := newEngine(t, sessions)
	sessions[0].Tiers[0] = router.TierFast // must not change the engine's session
	if _, err := e.ValidateV2(context.Background(), validateV2(1)); err != nil {
		t.Errorf("ValidateV2 on tier safe after the caller modified its slice: %v", err)
	}
}

func TestEngine_ValidateV2(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Fixed(router.Result{
		Verdict: router.VerdictInvalid, Confidence: 0.75, Reasons: []string{"hallucinated a date"},
	}))
	e := one(t, rec)
	got, err := e.ValidateV2(context.Background(), validateV2(1))
	if err != nil {
		t.Fatalf("ValidateV2: %v", err)
	}
	if len(got.Evidence.Runs) != 1 {
		t.Fatalf("evidence.runs has %d runs, want 1", len(got.Evidence.Runs))
	}
	run := got.Evidence.Runs[0]
	want := &router.ValidateV2Response{
		RequestID:  "req-1",
		Verdict:    router.VerdictInvalid,
		Confidence: 0.75,
		Reasons:    []string{"hallucinated a date"},
		Evidence: router.ValidateEvidence{
			Runs: []router.Run{{
				SessionID: 1, TaskID: run.TaskID, Label: router.Label(router.VerdictInvalid), Confidence: 0.75,
				Reasons:       []string{"hallucinated a date"},
				Configuration: &router.Configuration{Tier: router.TierSafe, MaxSteps: router.DefaultMaxSteps, TimeoutMS: router.DefaultReplicaTimeout.Milliseconds()},
				LatencyMS:     run.LatencyMS,
			}},
			Scores: []router.Score{{Name: "confidence", Value: 0.75}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ValidateV2 response (-want +got):\n%s", diff)
	}
	if run.TaskID == "" {
		t.Errorf("run has no task id")
	}
	jobs := rec.Jobs()
	if len(jobs) != 1 {
		t.Fatalf("worker got %d jobs, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Kind != router.KindValidate || j.Version != 2 || j.SessionID != 1 || j.TaskID != run.TaskID ||
		j.Tier != router.TierSafe || string(j.Claim.Output) != `"a summary"` || !cmp.Equal(j.Rules, []string{"consistency"}) {
		t.Errorf("job = %+v, want validate v2 on session 1 with the request's claim, tier and rules, and the run's task id", j)
	}
}

func TestEngine_DelegateV2(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Fixed(router.Result{
		Output: map[string]int{"sum": 6},
		Steps:  []router.Step{{Description: "parse"}, {Description: "add", Tool: "calc", Output: json.RawMessage(`6`)}},
		Tools:  []string{"calc"},
		Model:  "small-1",
	}))
	e := one(t, rec)
	got, err := e.DelegateV2(context.Background(), delegateV2(1))
	if err != nil {
		t.Fatalf("DelegateV2: %v", err)
	}
	want := &router.DelegateV2Response{
		SessionID: 1, TaskID: got.TaskID, Result: json.RawMessage(`{"sum":6}`),
		Evidence: router.DelegateEvidence{
			Steps:         []router.Step{{Description: "parse"}, {Description: "add", Tool: "calc", Output: json.RawMessage(`6`)}},
			Tools:         []string{"calc"},
			Configuration: router.Configuration{Mode: router.ExecutionTools, Model: "small-1", Tier: router.TierFast, MaxSteps: 3, TimeoutMS: 5000},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DelegateV2 response (-want +got):\n%s", diff)
	}
	j := rec.Jobs()[0]
	if j.Kind != router.KindDelegate || j.Version != 2 || j.MaxSteps != 3 || j.TimeoutMS != 5000 ||
		j.Objective != "add the numbers" || j.Input.Kind() != router.InputString || j.TaskID != got.TaskID {
		t.Errorf("job = %+v, want the request's objective, input and bounds", j)
	}
}

func TestEngine_DelegateV2_deadlineReachesWorker(t *testing.T) {
	var left time.Duration
	w := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return nil, errors.New("no deadline")
		}
		left = time.Until(d)
		return &router.Result{Output: "ok"}, nil
	})
	req := delegateV2(1)
	req.Policy.TimeoutMS = 1500
	if _, err := one(t, w).DelegateV2(context.Background(), req); err != nil {
		t.Fatalf("DelegateV2: %v", err)
	}
	if left <= 0 || left > 1500*time.Millisecond {
		t.Errorf("worker's deadline is %v away, want within policy.timeout_ms (1.5s)", left)
	}
}

func TestEngine_v1(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Sequence(
		routertest.Answer("Paris"),
		routertest.Answer(map[string]string{"city": "Paris"}),
		routertest.Fixed(router.Result{Verdict: router.VerdictValid, Confidence: 0.9}),
	))
	e := one(t, rec)
	ctx := context.Background()

	d, err := e.DelegateV1(ctx, &router.DelegateV1Request{SessionID: 1, TaskRequestInput: "capital of France?", TaskDomain: "geo"})
	if err != nil {
		t.Fatalf("DelegateV1: %v", err)
	}
	if d.SessionID != 1 || d.TaskResultOutput != "Paris" || d.TaskID == "" {
		t.Errorf("DelegateV1 = %+v, want session 1, output Paris as text, a task id", d)
	}
	d2, err := e.DelegateV1(ctx, &router.DelegateV1Request{SessionID: 1, TaskRequestInput: "capital of France?"})
	if err != nil {
		t.Fatalf("DelegateV1: %v", err)
	}
	if d2.TaskResultOutput != `{"city":"Paris"}` {
		t.Errorf("DelegateV1 object output = %q, want its JSON", d2.TaskResultOutput)
	}
	if d.TaskID == d2.TaskID {
		t.Errorf("two runs share task id %q", d.TaskID)
	}

	v, err := e.ValidateV1(ctx, &router.ValidateV1Request{
		SessionID: 1, TaskRequestInput: "capital of France?", TaskResultOutput: "Paris",
		AcceptanceCriteria: []string{"accuracy"}, TaskType: "qa",
	})
	if err != nil {
		t.Fatalf("ValidateV1: %v", err)
	}
	if v.Verdict != router.VerdictValid || v.Confidence != 0.9 || v.Reasons == nil {
		t.Errorf("ValidateV1 = %+v, want VALID, 0.9 and a non-nil reasons list", v)
	}
	jobs := rec.Jobs()
	if j := jobs[0]; j.Objective != "capital of France?" || j.Domain != "geo" || j.Version != 1 {
		t.Errorf("delegate v1 job = %+v, want the prompt as objective and the domain hint", j)
	}
	if j := jobs[2]; j.Claim == nil || j.Claim.Description != "capital of France?" ||
		string(j.Claim.Output) != `"Paris"` || j.Claim.Type != "qa" || !cmp.Equal(j.Rules, []string{"accuracy"}) {
		t.Errorf("validate v1 job = %+v, want the v1 fields mapped onto the claim", j)
	}
}

func TestEngine_singleSessionRequestErrors(t *testing.T) {
	e := newEngine(t, []router.Session{{ID: 1, Worker: routertest.Verdict(router.VerdictValid), Tiers: []router.Tier{router.TierFast}}})
	ctx := context.Background()
	invalid := validateV2(1)
	invalid.Claim.Type = ""
	tests := []struct {
		name   string
		call   func() error
		fields []string
	}{
		{"unknown session v2", func() error { _, err := e.ValidateV2(ctx, validateV2(9)); return err }, []string{"session_id"}},
		{"unknown session v1", func() error {
			_, err := e.DelegateV1(ctx, &router.DelegateV1Request{SessionID: 9, TaskRequestInput: "x"})
			return err
		}, []string{"session_id"}},
		{"tier not served", func() error { _, err := e.ValidateV2(ctx, validateV2(1)); return err }, []string{"policy.tier"}},
		{"invalid request", func() error { _, err := e.ValidateV2(ctx, invalid); return err }, []string{"claim.type"}},
		{"nil v1 request", func() error { _, err := e.DelegateV1(ctx, nil); return err }, nil},
		{"nil v2 request", func() error { _, err := e.ValidateV2(ctx, nil); return err }, nil},
		{"nil v3 request", func() error { _, err := e.ValidateV3(ctx, nil); return err }, nil},
		{"nil factcheck request", func() error { _, err := e.Factcheck(ctx, nil); return err }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := asError(t, tt.call(), http.StatusBadRequest, "invalid_request")
			if diff := cmp.Diff(tt.fields, fields(p)); diff != "" {
				t.Errorf("fields named (-want +got):\n%s", diff)
			}
		})
	}
}
