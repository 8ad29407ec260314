package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// postTrust posts body to the trust route of srv and returns the status
// and decoded JSON.
func postTrust(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/api/v4/trust", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return resp.StatusCode, v
}

// TestHandler_numericDelegation: five sessions answer 18 in three
// spellings (18, "18", "18.0"). Without task.answer no two spellings are
// the same JSON and safe answers RETRY; with task.answer "number" every
// tier settles VALID with the result 18, a JSON number, and a consensus
// block whose median and agreement follow from its numbers. A sixth
// answer beyond the tolerance counts against, one in words is no vote.
func TestHandler_numericDelegation(t *testing.T) {
	spell := []any{18, "18", json.RawMessage(`18.0`), "18", 18}
	var ws []router.Worker
	for _, a := range spell {
		ws = append(ws, routertest.Answer(a))
	}
	e, err := router.NewEngine(routertest.Sessions(1, 5, ws...))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, svc)
	const task = `"task":{"type":"qa","input":"How many?"`

	status, v := postTrust(t, srv.URL, `{"mode":"delegation","policy":"oracle",`+task+`}}`)
	if status != http.StatusOK || v["status"] != "RETRY" {
		t.Errorf("without task.answer: %d %v, want RETRY (the spellings differ as JSON)", status, v["status"])
	}
	for _, policy := range []string{"fast", "safe", "oracle", "adaptive"} {
		status, v := postTrust(t, srv.URL, `{"mode":"delegation","policy":"`+policy+`",`+task+`,"answer":"number"}}`)
		if status != http.StatusOK || v["status"] != "VALID" || v["result"] != 18.0 {
			t.Errorf("%s: %d status %v result %#v, want VALID 18", policy, status, v["status"], v["result"])
			continue
		}
		c := v["evidence"].(map[string]any)
		if policy == "adaptive" && c["redundancy"] != 2.0 {
			t.Errorf("adaptive spent %v runs, want 2: two agreeing numbers settle it", c["redundancy"])
		}
	}

	// A number beyond the tolerance, and one in words.
	ws = []router.Worker{routertest.Answer(100), routertest.Answer("103"), routertest.Answer(150), routertest.Answer("about 100"), routertest.Answer(99.5)}
	e, err = router.NewEngine(routertest.Sessions(1, 5, ws...))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ = trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5))
	srv = newServer(t, svc)
	status, v = postTrust(t, srv.URL, `{"mode":"delegation","policy":"adaptive",`+task+`,"answer":"number","tolerance":{"relative":0.05}},"receipt":{"mode":"none"}}`)
	if status != http.StatusOK {
		t.Fatalf("adaptive: %d %v", status, v)
	}
	ev := v["evidence"].(map[string]any)
	steps := ev["steps"].([]any)
	var numbers []float64
	var words int
	for _, d := range ev["disagreements"].([]any) {
		if r, _ := d.(map[string]any)["reason"].(string); len(r) > 0 && bytes.Contains([]byte(r), []byte("not a number")) {
			words++
		}
	}
	for _, l := range ev["verdicts"].([]any) {
		if l != "OK" {
			t.Errorf("verdicts %v, want every run OK", ev["verdicts"])
		}
	}
	// Recompute from the runs the steps name: each run's session answers
	// the worker's number.
	answers := map[float64]any{1: 100.0, 2: "103", 3: 150.0, 4: "about 100", 5: 99.5}
	for _, s := range steps {
		for _, id := range s.(map[string]any)["sessions"].([]any) {
			if x, err := consensus.ParseNumber(answers[id.(float64)]); err == nil {
				numbers = append(numbers, x)
			}
		}
	}
	slices.Sort(numbers)
	m := numbers[(len(numbers)-1)/2]
	agree := 0
	for _, x := range numbers {
		if (consensus.Tolerance{Relative: 0.05}).Agrees(x, m) {
			agree++
		}
	}
	if v["result"] != m {
		t.Errorf("result %v, recomputed median %v of %v", v["result"], m, numbers)
	}
	if got, want := ev["agreement"].(float64), float64(agree)/float64(len(numbers)); got != want {
		t.Errorf("agreement %v, recomputed %v", got, want)
	}
	if got, want := v["confidence"].(float64), consensus.Posterior(agree, len(numbers)-agree); got != want {
		t.Errorf("confidence %v, recomputed %v", got, want)
	}
	if len(numbers)+words != len(ev["verdicts"].([]any)) {
		t.Errorf("%d numbers and %d answers in words, %d runs: a run in words must say why it is no vote", len(numbers), words, len(ev["verdicts"].([]any)))
	}
}

// TestHandler_numericDelegation_refused: the numeric members are
// refused with a 400 naming them (an unknown member of task.tolerance
// too, beside the other errors), and nothing runs.
func TestHandler_numericDelegation_refused(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Answer(1))
	e, err := router.NewEngine(routertest.Sessions(1, 1, rec, rec, rec))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := trust.New(e)
	srv := newServer(t, svc)
	for _, tc := range []struct {
		body  string
		field []string
	}{
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"text"}}`, []string{"task.answer"}},
		{`{"mode":"validation","policy":"safe","task":{"claimed_result":1,"answer":"number"}}`, []string{"task.answer"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","tolerance":{"absolute":1}}}`, []string{"task.tolerance"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number","tolerance":{"absolute":-1,"relative":-2}}}`, []string{"task.tolerance.absolute", "task.tolerance.relative"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number"},"delegation":{"agreement":"judged"}}`, []string{"delegation.agreement"}},
		// An unknown member would read as a bound of 0: exact equality.
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number","tolerance":{"abs":1}}}`, []string{"task.tolerance.abs"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number","tolerance":{"relative":0.1,"abs":1,"Rel":2}}}`, []string{"task.tolerance.Rel", "task.tolerance.abs"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number","tolerance":{"absolute":-1,"within":1}}}`, []string{"task.tolerance.absolute", "task.tolerance.within"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","tolerance":{"abs":1}}}`, []string{"task.tolerance", "task.tolerance.abs"}},
		// Above 1, −1.7e308 would agree with +1.7e308.
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number","tolerance":{"relative":1.5}}}`, []string{"task.tolerance.relative"}},
		{`{"mode":"delegation","policy":"safe","task":{"input":"x","answer":"number","tolerance":{"relative":1e999}}}`, []string{"task.tolerance.relative"}},
	} {
		status, v := postTrust(t, srv.URL, tc.body)
		var got []string
		errs, _ := v["errors"].([]any)
		for _, e := range errs {
			got = append(got, e.(map[string]any)["field"].(string))
		}
		if status != http.StatusBadRequest || !slices.Equal(got, tc.field) {
			t.Errorf("%s: %d naming %v, want 400 naming %v", tc.body, status, got, tc.field)
		}
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("workers got %d jobs, want none", n)
	}
}

// TestService_numericReceipt: the consensus snapshot of a numeric
// delegation's receipt records the tolerance, every run's number and the
// median, so that the result, agreement and confidence follow from the
// snapshot alone; for a one-call tier (the router's block) and for
// adaptive (the pooled block). With reputation on the confidence is
// calibrated on the map of the tier's numeric calls ("<tier>/number"),
// which the outcomes reported through Feedback build: the policy
// snapshot names it, and the decision's confidence is the median's
// Posterior read on the points it records.
func TestService_numericReceipt(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := []router.Worker{routertest.Answer(100), routertest.Answer("103"), routertest.Answer(150), routertest.Answer("about 100"), routertest.Answer(99.5)}
	e, err := router.NewEngine(routertest.Sessions(1, 5, ws...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSigningKey(priv), trust.WithSessionPool(1, 2, 3, 4, 5))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, policy := range []trust.Policy{trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
		for i := range 6 {
			req := &trust.Request{Mode: trust.ModeDelegation, Policy: policy, Receipt: receipt.Inline(),
				Task: trust.Task{Input: router.NewStringInput("How many?"), Answer: trust.AnswerNumber, Tolerance: &router.Tolerance{Relative: 0.05}}}
			resp, err := s.Call(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub))
			if err != nil {
				t.Fatalf("%s: Verify: %v", policy, err)
			}
			var r struct {
				Snap struct {
					Strategy   string     `json:"strategy"`
					Agreement  float64    `json:"agreement"`
					Confidence float64    `json:"confidence"`
					Agreeing   []int      `json:"agreeing"`
					Numbers    []*float64 `json:"numbers"`
					Aggregate  *float64   `json:"aggregate"`
					Tolerance  *struct {
						Absolute, Relative float64
					} `json:"tolerance"`
				} `json:"consensus_snapshot"`
			}
			if err := json.Unmarshal(resp.Receipt, &r); err != nil {
				t.Fatal(err)
			}
			c := r.Snap
			if c.Strategy != "median" || c.Tolerance == nil || c.Aggregate == nil {
				t.Fatalf("%s: snapshot %+v: want strategy median with tolerance and aggregate", policy, c)
			}
			var xs []float64
			for _, p := range c.Numbers {
				if p != nil {
					xs = append(xs, *p)
				}
			}
			sorted := slices.Sorted(slices.Values(xs))
			m := sorted[(len(sorted)-1)/2]
			tol := consensus.Tolerance{Absolute: c.Tolerance.Absolute, Relative: c.Tolerance.Relative}
			var agreeing []int
			for i, p := range c.Numbers {
				if p != nil && tol.Agrees(*p, m) {
					agreeing = append(agreeing, i)
				}
			}
			a, d := len(agreeing), len(xs)-len(agreeing)
			if *c.Aggregate != m || !jsonEqual(resp.Result, m) {
				t.Errorf("%s: aggregate %v, result %s; recomputed %v from %v", policy, *c.Aggregate, resp.Result, m, xs)
			}
			if !slices.Equal(agreeing, c.Agreeing) || c.Agreement != float64(a)/float64(a+d) {
				t.Errorf("%s: agreeing %v, agreement %v; recomputed %v, %v",
					policy, c.Agreeing, c.Agreement, agreeing, float64(a)/float64(a+d))
			}
			// The calibration basis: the map of the tier's numeric
			// calls, at the Posterior of the median's counts.
			uncalibrated := consensus.Posterior(a, d)
			cal := res.Receipt.PolicySnapshot.Calibration
			if cal == nil || cal.Tier != string(policy)+"/number" || cal.Uncalibrated != uncalibrated {
				t.Fatalf("%s call %d: calibration %+v; want tier %s/number at %v", policy, i, cal, policy, uncalibrated)
			}
			if (cal.Basis == reputation.BasisOutcomes) != (i > 0) {
				t.Errorf("%s call %d: basis %q, want outcomes once one was reported", policy, i, cal.Basis)
			}
			points := make([]reputation.Point, len(cal.Points))
			for j, p := range cal.Points {
				points[j] = reputation.Point{Score: p.Score, Rate: p.Rate}
			}
			want := reputation.Interpolate(points, uncalibrated)
			if math.Abs(want-res.Receipt.Decision.Confidence) > 1e-12 || math.Abs(want-resp.Confidence) > 1e-12 {
				t.Errorf("%s call %d: confidence %v (response %v), recomputed %v from the snapshot", policy, i, res.Receipt.Decision.Confidence, resp.Confidence, want)
			}
			if ev := resp.Evidence.Calibration; ev == nil || ev.Tier != cal.Tier || ev.Uncalibrated != uncalibrated || len(ev.Points) != len(points) {
				t.Errorf("%s call %d: evidence.calibration %+v, want the receipt's basis %+v", policy, i, ev, cal)
			}
			// The router's block (one-call tiers) states the median's
			// Posterior; adaptive's pooled block the calibrated number.
			block := uncalibrated
			if policy == trust.PolicyAdaptive {
				block = want
			}
			if math.Abs(c.Confidence-block) > 1e-12 {
				t.Errorf("%s call %d: snapshot confidence %v, recomputed %v", policy, i, c.Confidence, block)
			}
			if err := s.Feedback(ctx, resp.TraceID, i%3 != 0); err != nil {
				t.Fatalf("%s call %d: Feedback: %v", policy, i, err)
			}
		}
	}
}

// jsonEqual reports whether raw encodes the number x.
func jsonEqual(raw json.RawMessage, x float64) bool {
	var y float64
	return json.Unmarshal(raw, &y) == nil && y == x
}

// TestService_Call_numericNoNumber: a numeric delegation whose runs
// answer no number is RETRY saying so, not "0 of 0 answers agree".
func TestService_Call_numericNoNumber(t *testing.T) {
	w := routertest.Answer("about eighteen")
	e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []trust.Policy{trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
		resp, err := svc.Call(context.Background(), &trust.Request{Mode: trust.ModeDelegation, Policy: p,
			Task: trust.Task{Type: "qa", Input: router.NewStringInput("How many?"), Answer: trust.AnswerNumber}})
		if err != nil {
			t.Fatal(err)
		}
		ri := resp.RetryInstructions
		if resp.Status != trust.StatusRetry || ri == nil || !strings.Contains(ri.Reason, "no number") {
			t.Errorf("%s: %s %+v; want RETRY saying no number was found", p, resp.Status, ri)
		}
	}
}
