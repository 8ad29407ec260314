package trust_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// The five-wordings probe: five workers answer "who won the 1903 physics
// Nobel?" with five wordings of the same fact.
var wordings = []string{
	"Marie Curie won the 1903 Nobel Prize in Physics together with Pierre Curie.",
	"In 1903 Marie Curie shared the Nobel Prize in Physics with Pierre Curie.",
	"The 1903 physics Nobel went to Marie Curie, jointly with Pierre Curie and Henri Becquerel.",
	"Marie Curie: she was awarded the Nobel Prize in Physics in 1903.",
	"It was Marie Curie (with Pierre Curie and Becquerel) who won the Physics Nobel of 1903.",
}

// Answers that change one fact: the year, or the laureate.
var (
	changedYear     = "Marie Curie won the 1911 Nobel Prize in Physics together with Pierre Curie."
	changedLaureate = "Ernest Rutherford won the 1903 Nobel Prize in Physics."
)

// statesTheFact is what the fake judges know: the answer names Marie
// Curie, 1903 and the physics prize, and no other laureate or year.
func statesTheFact(s string) bool {
	return strings.Contains(s, "Marie Curie") && strings.Contains(s, "1903") && strings.Contains(strings.ToLower(s), "physics") &&
		!strings.Contains(s, "1911") && !strings.Contains(s, "Rutherford")
}

// probeWorker answers delegations with answer and judges validations by
// the facts: VALID when the claimed answer states them, else INVALID.
func probeWorker(answer string) router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		if job.Kind == router.KindDelegate {
			return &router.Result{Output: answer, Confidence: 0.9}, nil
		}
		var claimed string
		if err := json.Unmarshal(job.Claim.Output, &claimed); err != nil {
			return nil, err
		}
		if statesTheFact(claimed) {
			return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"names the 1903 physics laureate"}}, nil
		}
		return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9, Reasons: []string{"wrong laureate or year"}}, nil
	})
}

// probeEngine is an engine of five sessions, 1 to 5, answering answers.
func probeEngine(t *testing.T, answers []string) *router.Engine {
	t.Helper()
	workers := make([]router.Worker, len(answers))
	for i, a := range answers {
		workers[i] = probeWorker(a)
	}
	return newEngine(t, workers...)
}

func probeRequest(policy trust.Policy, agreement trust.Agreement) *trust.Request {
	req := &trust.Request{Mode: trust.ModeDelegation, Policy: policy, Task: trust.Task{
		Type: "qa", Input: router.NewStringInput("Who won the 1903 physics Nobel?"),
		Spec: trust.JSON("Name the laureate; one sentence."),
	}}
	if agreement != "" {
		req.Delegation = &trust.DelegationOptions{Agreement: agreement}
	}
	return req
}

// withChanged returns the five wordings with the first replaced by wrong.
func withChanged(wrong string) []string {
	return append([]string{wrong}, wordings[1:]...)
}

// A probeCase is one panel of the probe: the five answers, and the
// changed answer among them that must never win ("" when none is).
type probeCase struct {
	name    string
	answers []string
	wrong   string
}

// probeCases returns the probe's panels: the five wordings, then with
// the first changing the year, then the laureate.
func probeCases() []probeCase {
	return []probeCase{
		{"five wordings", wordings, ""},
		{"changed year", withChanged(changedYear), changedYear},
		{"changed laureate", withChanged(changedLaureate), changedLaureate},
	}
}

// callProbe makes the probe's call req on s and returns its response,
// failing unless it answered VALID with one of the five wordings, never
// the case's wrong one.
func callProbe(t *testing.T, s *trust.Service, req *trust.Request, tc probeCase) *trust.Response {
	t.Helper()
	resp, err := s.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusValid {
		t.Fatalf("status %s (%+v), want VALID", resp.Status, resp.RetryInstructions)
	}
	if got := resultString(t, resp.Result); !slices.Contains(wordings, got) || got == tc.wrong {
		t.Errorf("result %q, want one of the five wordings", got)
	}
	return resp
}

func resultString(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("result %s is not a string: %v", raw, err)
	}
	return s
}

// TestService_Call_probeExactRetries holds the default: strict equality
// never lets five wordings agree.
func TestService_Call_probeExactRetries(t *testing.T) {
	s, err := trust.New(probeEngine(t, wordings), trust.WithSessionPool(1, 2, 3, 4, 5))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
		resp, err := s.Call(context.Background(), probeRequest(p, ""))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != trust.StatusRetry {
			t.Errorf("%s: status %s, want RETRY under exact agreement", p, resp.Status)
		}
	}
}

// TestService_Call_probeJudged is the five-wordings probe under
// delegation.agreement "judged": VALID with one of the five answers at
// safe and adaptive, and with an answer changing the year or the laureate
// produced first, that answer is rejected and never returned.
func TestService_Call_probeJudged(t *testing.T) {
	for _, tc := range probeCases() {
		for _, p := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				// The pool's order makes session 1, which holds the
				// changed answer, produce first.
				s, err := trust.New(probeEngine(t, tc.answers), trust.WithSessionPool(1, 2, 3, 4, 5))
				if err != nil {
					t.Fatal(err)
				}
				resp := callProbe(t, s, probeRequest(p, trust.AgreementJudged), tc)
				checkJudging(t, resp)
				cs := resp.Evidence.Judging.Candidates
				if tc.wrong != "" {
					if len(cs) != 2 || resultString(t, cs[0].Output) != tc.wrong || cs[0].Verdict != trust.StatusInvalid || cs[1].Verdict != trust.StatusValid {
						t.Errorf("candidates %+v: want the changed answer rejected, then a second accepted", cs)
					}
				} else if len(cs) != 1 || cs[0].Verdict != trust.StatusValid {
					t.Errorf("candidates %+v: want one, accepted", cs)
				}
				if resp.Confidence != cs[len(cs)-1].Confidence || resp.Confidence <= 0.5 {
					t.Errorf("confidence %v, want the accepting validation's (%v)", resp.Confidence, cs[len(cs)-1].Confidence)
				}
				// The number is recomputed from the response alone.
				if c := resp.Evidence.Calibration; c == nil || c.Read() != resp.Confidence {
					t.Errorf("evidence.calibration %+v: want the basis the confidence %v is read from", c, resp.Confidence)
				}
				if p == trust.PolicyAdaptive && tc.wrong == "" && resp.Evidence.Redundancy > 4 {
					t.Errorf("adaptive spent %d runs on one accepted answer, want at most 4", resp.Evidence.Redundancy)
				}
			})
		}
	}
}

// checkJudging checks the judging record against the runs: every run is
// a producer or a judge, no session judges its own candidate, and the
// counts add up.
func checkJudging(t *testing.T, resp *trust.Response) {
	t.Helper()
	j := resp.Evidence.Judging
	if j == nil {
		t.Fatal("evidence.judging is missing")
	}
	seen := map[int]string{}
	for _, c := range j.Candidates {
		seen[c.Run] = "producer"
		if resp.Evidence.Verdicts[c.Run] != c.Label {
			t.Errorf("candidate run %d: label %s, verdicts say %s", c.Run, c.Label, resp.Evidence.Verdicts[c.Run])
		}
		for _, jd := range c.Judges {
			if jd.SessionID == c.SessionID {
				t.Errorf("session %d judged its own candidate", jd.SessionID)
			}
			if _, dup := seen[jd.Run]; dup {
				t.Errorf("run %d counted twice", jd.Run)
			}
			seen[jd.Run] = "judge"
			if resp.Evidence.Verdicts[jd.Run] != jd.Label {
				t.Errorf("judge run %d: label %s, verdicts say %s", jd.Run, jd.Label, resp.Evidence.Verdicts[jd.Run])
			}
		}
	}
	if len(seen) != len(resp.Evidence.Verdicts) || resp.Evidence.Launched != len(resp.Evidence.Verdicts) {
		t.Errorf("%d runs accounted for, %d verdicts, %d launched", len(seen), len(resp.Evidence.Verdicts), resp.Evidence.Launched)
	}
}

// TestService_Call_judgedAllRejected answers RETRY with no result when
// every candidate is rejected.
func TestService_Call_judgedAllRejected(t *testing.T) {
	answers := []string{changedYear, changedLaureate, wordings[0], wordings[1], wordings[2]}
	s, err := trust.New(probeEngine(t, answers), trust.WithSessionPool(1, 2, 3, 4, 5))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(context.Background(), probeRequest(trust.PolicyAdaptive, trust.AgreementJudged))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusRetry || string(resp.Result) != "null" || resp.Confidence != 0 || resp.RetryInstructions == nil {
		t.Errorf("status %s result %s confidence %v retry %+v, want RETRY, null, 0 and instructions",
			resp.Status, resp.Result, resp.Confidence, resp.RetryInstructions)
	}
	if n := len(resp.Evidence.Judging.Candidates); n != 2 {
		t.Errorf("%d candidates, want 2 (the most a call produces)", n)
	}
}

// TestService_Call_judgedNeedsJudges refuses a safe judged delegation
// with too few sessions besides the producer's, a 400 naming the policy
// before anything runs.
func TestService_Call_judgedNeedsJudges(t *testing.T) {
	s, err := trust.New(probeEngine(t, wordings[:3]), trust.WithSessionPool(1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Call(context.Background(), probeRequest(trust.PolicySafe, trust.AgreementJudged))
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Field != "policy" || p.Errors[0].Rule != "servable" {
		t.Fatalf("err = %v, want 400 naming policy, rule servable", err)
	}
}

// TestService_Call_judgedSecondNeedsJudges: at safe on four sessions, a
// rejected first candidate leaves two sessions, too few to produce a
// second and judge it on three: the call ends on the first, RETRY, having
// run one producer and three judges, where it ran a second producer and
// then failed.
func TestService_Call_judgedSecondNeedsJudges(t *testing.T) {
	workers, ran := countedWorkers([]string{changedYear, wordings[0], wordings[1], wordings[2]})
	s, err := trust.New(newEngine(t, workers...), trust.WithSessionPool(1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(context.Background(), probeRequest(trust.PolicySafe, trust.AgreementJudged))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusRetry || len(resp.Evidence.Judging.Candidates) != 1 || ran.Load() != 4 {
		t.Errorf("status %s, %d candidates, %d jobs; want RETRY, 1 candidate, 4 jobs", resp.Status, len(resp.Evidence.Judging.Candidates), ran.Load())
	}
}

// TestService_Call_judgedReceipt records in the receipt which runs
// produced and which judged.
func TestService_Call_judgedReceipt(t *testing.T) {
	s, err := trust.New(probeEngine(t, withChanged(changedYear)), trust.WithSessionPool(1, 2, 3, 4, 5),
		trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}))
	if err != nil {
		t.Fatal(err)
	}
	req := probeRequest(trust.PolicyAdaptive, trust.AgreementJudged)
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{ConsensusSnapshot: true, RouterTraceRefs: true}}
	resp, err := s.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var rc struct {
		Decision struct {
			Reasons []string `json:"reasons"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(resp.Receipt, &rc); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rc.Decision.Reasons {
		if strings.HasPrefix(r, "judged delegation: candidate") {
			lines = append(lines, r)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "produced by run 0 on session 1") || !strings.Contains(lines[0], "verdict INVALID") ||
		!strings.Contains(lines[1], "verdict VALID") {
		t.Errorf("receipt reasons %q: want both candidates with producer, judges and verdict", rc.Decision.Reasons)
	}
}

func TestRequest_Validate_delegation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   *trust.Request
		field string
	}{
		{"unknown agreement", probeRequest(trust.PolicySafe, "semantic"), "delegation.agreement"},
		{"delegation options in validation", func() *trust.Request {
			r := request(trust.ModeValidation, trust.PolicySafe)
			r.Delegation = &trust.DelegationOptions{Agreement: trust.AgreementJudged}
			return r
		}(), "delegation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *trust.Error
			if err := tc.req.Validate(); !errors.As(err, &p) || p.Status != http.StatusBadRequest ||
				!slices.ContainsFunc(p.Errors, func(f problem.FieldError) bool { return f.Field == tc.field }) {
				t.Fatalf("err = %v, want a 400 naming %s", err, tc.field)
			}
		})
	}
	for _, a := range []trust.Agreement{"", trust.AgreementExact, trust.AgreementJudged} {
		if err := probeRequest(trust.PolicySafe, a).Validate(); err != nil {
			t.Errorf("agreement %q: %v", a, err)
		}
	}
}

// TestClient_Call_freeText runs both ways over loopback HTTP (Client →
// Handler → Service): the request's delegation member reaches the
// service, and evidence.judging and evidence.grouping come back whole.
func TestClient_Call_freeText(t *testing.T) {
	judged, err := trust.New(probeEngine(t, withChanged(changedYear)), trust.WithSessionPool(1, 2, 3, 4, 5))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := newClient(t, newServer(t, judged).URL).Call(context.Background(), probeRequest(trust.PolicyAdaptive, trust.AgreementJudged))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusValid || resultString(t, resp.Result) == changedYear {
		t.Errorf("judged over HTTP: %s %s", resp.Status, resp.Result)
	}
	checkJudging(t, resp)
	if cs := resp.Evidence.Judging.Candidates; len(cs) != 2 || len(cs[0].Judges) == 0 || cs[0].Verdict != trust.StatusInvalid {
		t.Errorf("judged over HTTP: candidates %+v", cs)
	}

	g, _ := probeGrouper(t)
	grouped, err := trust.New(probeEngine(t, wordings), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithGrouper(g))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = newClient(t, newServer(t, grouped).URL).Call(context.Background(), probeRequest(trust.PolicySafe, ""))
	if err != nil {
		t.Fatal(err)
	}
	if gr := resp.Evidence.Grouping; resp.Status != trust.StatusValid || gr == nil || len(gr.Pairs) == 0 || len(gr.Groups) != 3 {
		t.Errorf("grouped over HTTP: %s, grouping %+v", resp.Status, resp.Evidence.Grouping)
	}
}

// TestService_Call_judgedAdaptiveRuns spends three runs on an answer the
// first two judges accept: one producer, two judges.
func TestService_Call_judgedAdaptiveRuns(t *testing.T) {
	s, err := trust.New(probeEngine(t, wordings), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(context.Background(), probeRequest(trust.PolicyAdaptive, trust.AgreementJudged))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusValid || resp.Evidence.Redundancy != 3 {
		t.Errorf("status %s after %d runs (verdicts %v), want VALID after 3", resp.Status, resp.Evidence.Redundancy, resp.Evidence.Verdicts)
	}
}
