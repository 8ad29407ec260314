package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// honest answers every kind of job: VALID for validations, the upper-cased
// input for delegations; it reports confidence conf.
func honest(conf float64) router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		if job.Kind == router.KindDelegate {
			s, _ := job.Input.String()
			return &router.Result{Output: "done: " + s, Confidence: conf}, nil
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: conf, Reasons: []string{"matches the input"}}, nil
	})
}

func newEngine(t *testing.T, workers ...router.Worker) *router.Engine {
	t.Helper()
	e, err := router.NewEngine(routertest.Sessions(1, 2, workers...))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// agreementEngine is newEngine with a book that also learns reliabilities
// from agreement (reputation.Options.LearnFromAgreement): the tests of
// what agreement teaches use it.
func agreementEngine(t *testing.T, workers ...router.Worker) *router.Engine {
	t.Helper()
	book, err := reputation.New(nil, reputation.Options{LearnFromAgreement: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := router.NewEngine(routertest.Sessions(1, 2, workers...), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func request(mode trust.Mode, policy trust.Policy) *trust.Request {
	req := &trust.Request{Mode: mode, Policy: policy, Task: trust.Task{Type: "summary", Input: router.NewStringInput("Paris is in France.")}}
	if mode != trust.ModeDelegation {
		req.Task.ClaimedResult = json.RawMessage(`"Paris is French."`)
	}
	if mode == trust.ModeArbitration {
		req.Task.DisputeContext = json.RawMessage(`{"buyer":"too short"}`)
	}
	return req
}

// TestService_engine runs every mode under every tier on an in-process
// engine of five honest sessions.
func TestService_engine(t *testing.T) {
	workers := []router.Worker{honest(0.95), honest(0.95), honest(0.95), honest(0.95), honest(0.95)}
	s, err := trust.New(newEngine(t, workers...))
	if err != nil {
		t.Fatal(err)
	}
	want := map[trust.Mode]trust.Status{
		trust.ModeDelegation: trust.StatusValid, trust.ModeValidation: trust.StatusValid, trust.ModeArbitration: trust.StatusSellerValid,
	}
	spent := map[trust.Policy]int{trust.PolicyFast: 1, trust.PolicySafe: 3, trust.PolicyOracle: 5, trust.PolicyAdaptive: 2}
	for mode, status := range want {
		for policy, replicas := range spent {
			resp, err := s.Call(context.Background(), request(mode, policy))
			if err != nil {
				t.Fatalf("%s/%s: %v", mode, policy, err)
			}
			runs := resp.Evidence.Redundancy
			if policy == trust.PolicyAdaptive && runs == 3 {
				// Sessions still at the prior (0.8): two agreeing votes
				// state 16/17, under the weighted threshold, and a third
				// runs; once they have a record, two settle the call.
				runs = 2
			}
			if resp.Status != status || runs != replicas || resp.RetryInstructions != nil {
				t.Errorf("%s/%s: status %s after %d replicas (retry %+v), want %s after %d",
					mode, policy, resp.Status, resp.Evidence.Redundancy, resp.RetryInstructions, status, replicas)
			}
			if resp.Receipt != nil {
				t.Errorf("%s/%s: a call without a receipt block got a receipt", mode, policy)
			}
		}
	}
}

// TestService_engineAdaptiveEscalates: on an in-process engine, adaptive
// pools its runs over distinct sessions; a lying session makes it add
// runs until the honest majority settles the call, and the liar's answer
// shows in the disagreements. The liar is session 1, tried first.
func TestService_engineAdaptiveEscalates(t *testing.T) {
	unsure := honest(0.5)
	s, _ := trust.New(newEngine(t, routertest.Lie(unsure), unsure, unsure, unsure, unsure), trust.WithoutReputation())
	resp, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	// INVALID, VALID; then two more VALID: 3 of 4.
	if resp.Evidence.Launched != 4 || resp.Evidence.Answered != 4 || len(resp.Evidence.Steps) != 4 {
		t.Fatalf("launched %d, answered %d over %d steps; want 4 runs", resp.Evidence.Launched, resp.Evidence.Answered, len(resp.Evidence.Steps))
	}
	if resp.Status != trust.StatusValid || resp.Evidence.Agreement != 0.75 || resp.Confidence != 13.0/16 {
		t.Errorf("status %s, agreement %v, confidence %v; want VALID, 0.75, 13/16", resp.Status, resp.Evidence.Agreement, resp.Confidence)
	}
	if len(resp.Evidence.Disagreements) != 1 || resp.Evidence.Disagreements[0].Label != "INVALID" || resp.Evidence.Disagreements[0].SessionID != 1 {
		t.Errorf("disagreements %+v; want the liar's INVALID on session 1", resp.Evidence.Disagreements)
	}
	seen := map[router.SessionID]bool{}
	for _, st := range resp.Evidence.Steps {
		for _, id := range st.Sessions {
			if seen[id] {
				t.Errorf("session %d ran twice", id)
			}
			seen[id] = true
		}
	}
}

// TestService_engineAdaptiveDelegationDissent: in delegation, agreement is
// agreement of outputs. A session whose output differs from the others'
// (both labelled OK) dissents: adaptive escalates past it, and it shows in
// the disagreements.
func TestService_engineAdaptiveDelegationDissent(t *testing.T) {
	other := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		return &router.Result{Output: "something else", Confidence: 0.9}, nil
	})
	w := honest(0.9)
	s, _ := trust.New(newEngine(t, w, other, w, w, w), trust.WithoutReputation())
	resp, err := s.Call(context.Background(), request(trust.ModeDelegation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusValid || string(resp.Result) != `"done: Paris is in France."` {
		t.Errorf("status %s, result %s; want VALID with the majority's output", resp.Status, resp.Result)
	}
	if resp.Evidence.Launched != 4 || len(resp.Evidence.Disagreements) != 1 || resp.Evidence.Disagreements[0].SessionID != 2 {
		t.Errorf("launched %d, disagreements %+v; want 4 runs and session 2 dissenting", resp.Evidence.Launched, resp.Evidence.Disagreements)
	}
}

// TestService_engineOracleDisagreement: under oracle's fail_hard, one
// dissent among five is a RETRY with evidence, not an error.
func TestService_engineOracleDisagreement(t *testing.T) {
	w := honest(0.9)
	s, _ := trust.New(newEngine(t, w, w, w, w, routertest.Lie(w)))
	resp, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyOracle))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusRetry || resp.RetryInstructions == nil {
		t.Fatalf("status %s, retry %+v; want RETRY with instructions", resp.Status, resp.RetryInstructions)
	}
	if len(resp.Evidence.Disagreements) == 0 {
		t.Errorf("no disagreement in the evidence: %+v", resp.Evidence)
	}
}

func TestService_receipts(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	signer, err := receipt.NewEd25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	w := honest(0.95)
	s, err := trust.New(newEngine(t, w, w, w), trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: store}), trust.WithSignedReceipts())
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := trust.WithCaller(context.Background(), "alice")

	t.Run("inline", func(t *testing.T) {
		req := request(trust.ModeValidation, trust.PolicySafe)
		req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, TTL: "30d",
			Include: receipt.Include{ConsensusSnapshot: true, PolicySnapshot: true, InputHash: true, OutputHash: true, RouterTraceRefs: true}}
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		res, err := verifier.Verify(resp.Receipt, receipt.Originals{Input: json.RawMessage(`"Paris is in France."`), Output: req.Task.ClaimedResult}, time.Now())
		if err != nil || !res.Valid() {
			t.Fatalf("verify: %v %+v", err, res)
		}
		r := res.Receipt
		if r.Decision.Status != string(resp.Status) || r.PolicySnapshot == nil || r.PolicySnapshot.Consensus.Replicas != 3 ||
			r.ConsensusSnapshot == nil || r.ConsensusSnapshot.Replicas != 3 || r.CortensorRefs == nil ||
			len(r.CortensorRefs.Sessions) != 3 || r.CortensorRefs.RouterTraceIDs[0] != resp.TraceID {
			t.Errorf("receipt does not record what ran: %+v", r)
		}
		rec, err := receipt.Fetch(context.Background(), store, r.ReceiptID, "alice", time.Now())
		if err != nil || string(rec.Data) != string(resp.Receipt) {
			t.Errorf("fetch by owner: %v; stored bytes equal to response: %v", err, string(rec.Data) == string(resp.Receipt))
		}
		if _, err := receipt.Fetch(context.Background(), store, r.ReceiptID, "mallory", time.Now()); !errors.Is(err, receipt.ErrNotFound) {
			t.Errorf("fetch by a stranger: %v, want ErrNotFound", err)
		}
	})

	t.Run("detached without snapshots", func(t *testing.T) {
		req := request(trust.ModeArbitration, trust.PolicyFast)
		req.Receipt = receipt.Request{Mode: receipt.DeliveryDetached, Visibility: receipt.VisibilityShared, Counterparties: []string{"bob"}}
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var ref receipt.Ref
		if err := json.Unmarshal(resp.Receipt, &ref); err != nil || ref.ReceiptID == "" || ref.Visibility != receipt.VisibilityShared {
			t.Fatalf("detached member %s: %v", resp.Receipt, err)
		}
		var members map[string]json.RawMessage
		json.Unmarshal(resp.Receipt, &members)
		if _, ok := members["decision"]; ok {
			t.Errorf("a detached response carries the whole receipt: %s", resp.Receipt)
		}
		rec, err := receipt.Fetch(context.Background(), store, ref.ReceiptID, "bob", time.Now())
		if err != nil {
			t.Fatalf("counterparty fetch: %v", err)
		}
		r, err := receipt.Parse(rec.Data)
		if err != nil {
			t.Fatal(err)
		}
		if r.ConsensusSnapshot != nil || r.PolicySnapshot != nil || r.CortensorRefs != nil || r.TaskMeta.InputHash != "" {
			t.Errorf("members not asked for are present: %s", rec.Data)
		}
		if r.Decision.Status != string(trust.StatusSellerValid) {
			t.Errorf("decision status %s, want SELLER_VALID", r.Decision.Status)
		}
	})

	t.Run("none stores nothing", func(t *testing.T) {
		store.DeleteExpired(context.Background(), time.Now().Add(1000*24*time.Hour)) // empty the store
		req := request(trust.ModeValidation, trust.PolicyFast)
		req.Receipt = receipt.Request{Mode: receipt.DeliveryNone}
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Receipt != nil {
			t.Errorf("mode none gave a receipt: %s", resp.Receipt)
		}
		if n, _ := store.DeleteExpired(context.Background(), time.Now().Add(1000*24*time.Hour)); n != 0 {
			t.Errorf("mode none stored %d receipts", n)
		}
	})
}

func TestNew_signedReceiptsNeedASigner(t *testing.T) {
	e := newEngine(t, honest(1))
	if _, err := trust.New(e, trust.WithSignedReceipts()); err == nil {
		t.Error("New accepted signed receipts without an issuer")
	}
	if _, err := trust.New(e, trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}), trust.WithSignedReceipts()); err == nil {
		t.Error("New accepted signed receipts without a signer")
	}
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyFast)
	req.Receipt.Mode = receipt.DeliveryInline
	_, err = s.Call(context.Background(), req)
	var p *trust.Error
	if !errors.As(err, &p) || len(p.Errors) != 1 || p.Errors[0].Field != "receipt.mode" {
		t.Errorf("receipt asked of a service without receipts: %v, want 400 naming receipt.mode", err)
	}
}

// TestService_usage: the tokens and cost the workers report add up in the
// evidence, over every step.
func TestService_usage(t *testing.T) {
	costly := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		res, err := honest(0.5).Work(ctx, job)
		res.Usage = &router.Usage{PromptTokens: 10, CompletionTokens: 2, Cost: 0.01}
		return res, err
	})
	s, _ := trust.New(newEngine(t, costly, costly, costly, costly, costly))
	resp, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, st := range resp.Evidence.Steps {
		answered += st.Replicas
	}
	u := resp.Evidence.Usage
	if u == nil || u.PromptTokens < 10*int64(len(resp.Evidence.Steps)) || u.PromptTokens > 10*int64(answered) || u.PromptTokens%10 != 0 {
		t.Errorf("usage %+v over steps %+v: want 10 prompt tokens per answering replica", u, resp.Evidence.Steps)
	}
}

// TestService_adaptiveOverLoopback runs adaptive on a remote router: a
// router.Client to an engine behind router.NewHandler over real loopback.
// The candidates come from GET /api/v1/status, every run is a version 3
// call of one replica on a session not used before, and the votes pool
// as in-process: the liar on session 1 makes adaptive add two runs.
func TestService_adaptiveOverLoopback(t *testing.T) {
	unsure := honest(0.5)
	e := newEngine(t, routertest.Lie(unsure), unsure, unsure, unsure, unsure)
	c := remoteRouter(t, e)
	s, err := trust.New(c)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusValid || resp.Evidence.Launched != 4 || resp.Confidence != 13.0/16 {
		t.Errorf("status %s after %d runs, confidence %v; want VALID after 4, 13/16", resp.Status, resp.Evidence.Launched, resp.Confidence)
	}
	var sessions []router.SessionID
	for _, st := range resp.Evidence.Steps {
		if st.Route != "/api/v3/validate" || st.Replicas != 1 {
			t.Errorf("step %+v, want a version 3 validation of one replica", st)
		}
		sessions = append(sessions, st.Sessions...)
	}
	if want := []router.SessionID{1, 2, 3, 4}; !slices.Equal(sessions, want) {
		t.Errorf("sessions %v, want %v", sessions, want)
	}
}

// TestService_singleSession: with WithSingleSession, fast calls version 2
// on that session, and adaptive runs first there, then on other sessions
// through version 3.
func TestService_singleSession(t *testing.T) {
	w := honest(0.9)
	s, err := trust.New(newEngine(t, w, w, w, w, w), trust.WithSingleSession(3))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	if st := resp.Evidence.Steps; len(st) != 1 || st[0].Route != "/api/v2/validate" || !slices.Equal(st[0].Sessions, []router.SessionID{3}) {
		t.Errorf("fast steps %+v, want one version 2 call on session 3", st)
	}
	resp, err = s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	st := resp.Evidence.Steps
	if resp.Status != trust.StatusValid || len(st) < 2 || st[0].Route != "/api/v2/validate" || st[0].Sessions[0] != 3 {
		t.Fatalf("status %s, steps %+v; want VALID from version 2 on session 3, then version 3 elsewhere", resp.Status, st)
	}
	for _, s := range st[1:] {
		if s.Route != "/api/v3/validate" || s.Sessions[0] == 3 {
			t.Errorf("step %+v, want version 3 on another session than 3", s)
		}
	}
}

// TestService_singleSessionUsage: fast on WithSingleSession calls version
// 2, whose response carries the run's usage, steps and tools; the usage
// reaches the evidence as it does over version 3.
func TestService_singleSessionUsage(t *testing.T) {
	want := router.Usage{PromptTokens: 10, CompletionTokens: 2, Cost: 0.01}
	costly := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		res, err := honest(0.9).Work(ctx, job)
		if res != nil {
			u := want
			res.Usage = &u
		}
		return res, err
	})
	s, err := trust.New(newEngine(t, costly, costly, costly, costly, costly), trust.WithSingleSession(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation} {
		resp, err := s.Call(context.Background(), request(mode, trust.PolicyFast))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Evidence.Usage == nil || *resp.Evidence.Usage != want {
			t.Errorf("%s: usage %+v, want the run's %+v", mode, resp.Evidence.Usage, want)
		}
	}
}
