package trust_test

// Recomputation through trust.Client: fixed panels of fake sessions, every
// tier, validations and numeric, text and judged delegations, reputation
// on and off, outcomes reported between calls, and every figure
// recomputed from the decoded response alone with the exported functions
// the documents name (9.2, 9.3, 6.5, 6.6, 10.3); the panel is consulted
// only to check that each run's label and the result are what a worker
// sent (and, for a judged delegation, by the rig's own checks).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// clientPanels are the panels the client recomputation runs: one that
// agrees with a slow tail (runs cut short once the answer is settled),
// one whose dissenters answer late (one of them ignoring cancellation),
// one whose answers are paraphrases grouped by a Grouper, one split (at
// an escalation threshold), one whose lone right session comes to lead
// once outcomes are reported, and one scattered with a failing and a
// hanging session (too few healthy sessions for oracle) over a router
// that counts failures as negative evidence.
var clientPanels = map[string][]fakeSession{
	"unanimous-slow-tail": {
		{verdict: router.VerdictValid, text: "red", num: 42},
		{verdict: router.VerdictValid, text: "red", num: "42"},
		{verdict: router.VerdictValid, text: "red", num: 42.0, delay: 120 * time.Millisecond},
		{verdict: router.VerdictValid, text: "red", num: 42, delay: 150 * time.Millisecond},
		{verdict: router.VerdictValid, text: "red", num: 42, stub: true, delay: 60 * time.Millisecond},
	},
	"split": {
		{verdict: router.VerdictValid, text: "red", num: 42},
		{verdict: router.VerdictInvalid, text: "blue", num: 43},
		{verdict: router.VerdictValid, text: "red", num: "42"},
		{verdict: router.VerdictInvalid, text: "green", num: "n/a"},
		{verdict: router.VerdictValid, text: "red", num: 42.0, delay: 40 * time.Millisecond},
	},
	"late-dissent": {
		{verdict: router.VerdictValid, text: "red", num: 42},
		{verdict: router.VerdictValid, text: "red", num: 42},
		{verdict: router.VerdictInvalid, text: "blue", num: 43, stub: true, delay: 80 * time.Millisecond},
		{verdict: router.VerdictInvalid, text: "green", num: 41, delay: 200 * time.Millisecond},
		{verdict: router.VerdictValid, text: "red", num: "42", delay: 100 * time.Millisecond},
	},
	"one-right": {
		{verdict: router.VerdictInvalid, text: "red", num: 42},
		{verdict: router.VerdictValid, text: "blue", num: 43},
		{verdict: router.VerdictValid, text: "blue", num: 43},
		{verdict: router.VerdictValid, text: "blue", num: 43},
		{verdict: router.VerdictValid, text: "blue", num: 43},
	},
	"paraphrase": {
		{verdict: router.VerdictValid, text: "red", num: 42},
		{verdict: router.VerdictValid, text: "Red", num: 42},
		{verdict: router.VerdictInvalid, text: "blue", num: 43},
		{verdict: router.VerdictValid, text: " RED", num: 42, delay: 30 * time.Millisecond},
		{verdict: router.VerdictValid, text: "Blue", num: 43, delay: 60 * time.Millisecond},
	},
	"scattered": {
		{verdict: router.VerdictValid, text: "red", num: 41, fail: true},
		{verdict: router.VerdictInvalid, text: "blue", num: 42},
		{verdict: router.VerdictValid, text: "green", num: 43, hang: true},
		{verdict: router.VerdictNeedsSpec, text: "red", num: 42},
		{verdict: router.VerdictValid, text: "yellow", num: "none"},
	},
}

// TestRecompute_client drives every tier and mode through trust.Client
// against trust.NewHandler, with reputation on and off and outcomes
// reported between calls, and recomputes each response from its body.
func TestRecompute_client(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a few hundred calls")
	}
	for _, name := range slices.Sorted(maps.Keys(clientPanels)) {
		for _, repOn := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reputation=%v", name, repOn), func(t *testing.T) {
				t.Parallel() // each panel its own engine and servers
				recomputeOverClient(t, name, repOn)
			})
		}
	}
}

// TestRecompute_clientLoneStop runs adaptive calls on one session, whose
// one answer reports fakeConfidence, through trust.Client against
// trust.NewHandler, at escalation thresholds it reaches and does not:
// evidence.lone and the receipt's policy_snapshot.lone record the
// threshold and the confidence the run reported, from which the status
// recomputes (the answer's verdict exactly when the confidence reaches
// the threshold), and a service without a threshold records neither.
func TestRecompute_clientLoneStop(t *testing.T) {
	ctx := context.Background()
	for _, threshold := range []float64{0, 0.65, 0.75} {
		for _, repOn := range []bool{false, true} {
			var opts []trust.Option
			if threshold > 0 {
				opts = append(opts, trust.WithEscalationThreshold(threshold))
			}
			panel := []fakeSession{{verdict: router.VerdictInvalid, text: "red", num: 42}}
			rig := newRecomputeRig(t, panel, repOn, nil, opts...)
			rig.escalation = threshold
			cl := newClient(t, rig.srv.URL)
			for _, kind := range []string{"validation", "text", "number"} {
				mode := "delegation"
				if kind == "validation" {
					mode = kind
				}
				what := fmt.Sprintf("threshold %v reputation=%v %s", threshold, repOn, kind)
				c := recomputeRequest(mode, "adaptive", kind == "number", false)
				var req trust.Request
				if err := json.Unmarshal(c.body, &req); err != nil {
					t.Fatal(err)
				}
				resp, err := cl.Call(ctx, &req)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				var want *trust.Lone
				if threshold > 0 {
					want = &trust.Lone{Threshold: threshold, Confidence: fakeConfidence}
				}
				if d := cmp.Diff(want, resp.Evidence.Lone); d != "" {
					t.Errorf("%s: evidence.lone (-want +got):\n%s", what, d)
				}
				bad := append(fromResponse(c, rig, resp), sentByWorkers(rig, c, resp)...)
				for _, m := range bad {
					t.Errorf("%s: %s: %s\n  evidence: %s", what, m.field, m.detail, evidenceJSON(resp))
				}
			}
		}
	}
}

// clientKinds are the calls of each round: a validation, and delegations
// of text, of a number, and of text judged by validations (9.4).
var clientKinds = []string{"validation", "text", "number", "judged"}

// clientPolicies are the tiers each kind of call runs at.
var clientPolicies = []string{"fast", "safe", "oracle", "adaptive"}

// recomputeOverClient runs six rounds of every kind of call at every tier
// on the panel name, checks each response, and reports its outcome when
// the service keeps reputation.
func recomputeOverClient(t *testing.T, name string, repOn bool) {
	ctx := context.Background()
	var opts []trust.Option
	var eopts []router.EngineOption
	switch name {
	case "paraphrase":
		opts = append(opts, trust.WithGrouper(caseGrouper{}))
	case "scattered":
		eopts = append(eopts, router.WithFailureMode(consensus.FailuresNegative))
	case "split":
		opts = append(opts, trust.WithEscalationThreshold(0.65))
	}
	rig := newRecomputeRig(t, clientPanels[name], repOn, eopts, opts...)
	if name == "split" {
		rig.escalation = 0.65
	}
	cl := newClient(t, rig.srv.URL)
	truth := router.VerdictValid
	if name == "one-right" {
		truth = router.VerdictInvalid
	}
	covered := map[string]int{}
	for round := range 6 {
		for _, kind := range clientKinds {
			for _, policy := range clientPolicies {
				mode, numeric := kind, kind == "number"
				if kind != "validation" {
					mode = "delegation"
				}
				judged := kind == "judged"
				c := recomputeRequest(mode, policy, numeric, judged)
				var req trust.Request
				if err := json.Unmarshal(c.body, &req); err != nil {
					t.Fatal(err)
				}
				if numeric && round%2 == 1 {
					// Odd rounds let 41, 42 and 43 agree.
					req.Task.Tolerance = &router.Tolerance{Absolute: 1}
				}
				what := fmt.Sprintf("round %d %s/%s", round, kind, policy)
				resp, err := cl.Call(ctx, &req)
				if judged && (policy == "oracle" || name == "scattered" && err != nil) {
					// Five judges and a producer: more sessions than
					// the panel's five; and the scattered panel's
					// healthy sessions are too few for three judges.
					var e *trust.Error
					if !errors.As(err, &e) || len(e.Errors) != 1 || e.Errors[0].Field != "policy" || e.Errors[0].Rule != "servable" {
						t.Errorf("%s: %v, want 400 policy/servable", what, err)
					}
					continue
				}
				if err != nil {
					// The scattered panel's sessions fail (502 when no
					// run answered, 504 when none in time) and then
					// leave too few for oracle (503).
					var e *trust.Error
					if name != "scattered" || !errors.As(err, &e) || !slices.Contains([]string{"all_replicas_failed", "timeout", "insufficient_sessions"}, string(e.Code)) {
						t.Errorf("%s: %v", what, err)
					}
					continue
				}
				covered[kind+"/"+policy]++
				ev := resp.Evidence
				for k, ok := range map[string]bool{"cancelled": ev.Cancelled > 0, "leader": ev.Leader != nil, "grouped": ev.Grouping != nil, "judged": ev.Judging != nil,
					"points": ev.Calibration != nil && len(ev.Calibration.Points) > 0, "lone": ev.Lone != nil} {
					if ok {
						covered[k]++
					}
				}
				var bad mismatches
				switch {
				case judged:
					bad = rig.check(c, resp)
				default:
					bad = fromResponse(c, rig, resp)
					if ev.Grouping != nil {
						bad = append(bad, checkGrouped(resp)...)
					}
					bad = append(bad, sentByWorkers(rig, c, resp)...)
				}
				for _, m := range bad {
					t.Errorf("%s: %s: %s\n  evidence: %s", what, m.field, m.detail, evidenceJSON(resp))
				}
				if repOn {
					report(t, rig.svc, c, resp, truth)
				}
			}
		}
	}
	// The panels must reach what they are for: every kind at every tier,
	// but a judged oracle (six sessions) and what the scattered panel's
	// failing sessions leave unservable.
	for _, kind := range clientKinds {
		for _, policy := range clientPolicies {
			unservable := policy == "oracle" && (kind == "judged" || name == "scattered") || kind == "judged" && name == "scattered"
			if covered[kind+"/"+policy] == 0 && !unservable {
				t.Errorf("no %s/%s response (covered %v)", kind, policy, covered)
			}
		}
	}
	want := map[string]bool{"points": repOn, "grouped": name == "paraphrase", "leader": repOn && name == "one-right", "judged": true,
		"cancelled": name == "unanimous-slow-tail" || name == "late-dissent", "lone": name == "split"}
	for k, w := range want {
		if w && covered[k] == 0 {
			t.Errorf("no response with %s (covered %v)", k, covered)
		}
	}
}

// evidenceJSON is resp's evidence, for failure messages.
func evidenceJSON(resp *trust.Response) string {
	b, _ := json.Marshal(struct {
		Status     trust.Status   `json:"status"`
		Confidence float64        `json:"confidence"`
		Result     any            `json:"result"`
		Evidence   trust.Evidence `json:"evidence"`
	}{resp.Status, resp.Confidence, resp.Result, resp.Evidence})
	return string(b)
}

// report tells the service the call's outcome: truth for a validation,
// and a delegation right when its result is red or 42.
func report(t *testing.T, svc *trust.Service, c recomputeCall, resp *trust.Response, truth router.Verdict) {
	t.Helper()
	ctx := trust.WithCaller(context.Background(), "alice")
	var err error
	if c.mode == "delegation" {
		k := resultKey(resp.Result, c.numeric)
		err = svc.Feedback(ctx, resp.TraceID, k == "red" || k == "42")
	} else {
		err = svc.FeedbackVerdict(ctx, resp.TraceID, truth)
	}
	// A validation whose votes tied, or whose leading verdict is
	// neither VALID nor INVALID, and a delegation without a result have
	// no outcome to report.
	tied := c.mode != "delegation" && (resp.Status == trust.StatusRetry || resp.Status == trust.StatusNeedsSpec) ||
		c.mode == "delegation" && string(resp.Result) == "null"
	// The report stands when its exam finds too few healthy sessions.
	if err != nil && !(tied && errors.Is(err, trust.ErrUnknownCall)) && !errors.Is(err, trust.ErrExam) {
		t.Errorf("feedback on %s %s (%s): %v\n  evidence: %s", c.mode, c.policy, resp.Status, err, evidenceJSON(resp))
	}
}

// accepted reports whether the status accepts a winner of the mode.
func accepted(mode string, s trust.Status) bool {
	if mode == "delegation" {
		return s == trust.StatusValid
	}
	return s == trust.StatusValid || s == trust.StatusInvalid || s == trust.StatusNeedsSpec
}

// sentByWorkers checks that the response shows what each worker sent:
// each run's label is its session's verdict (OK for a delegation), ERROR
// or TIMEOUT for a failure, or CANCELLED; and a delegation's result is an
// answer some run gave.
func sentByWorkers(rig *recomputeRig, c recomputeCall, resp *trust.Response) mismatches {
	var bad mismatches
	ev := resp.Evidence
	var sess []router.SessionID
	for _, st := range ev.Steps {
		if !st.Check {
			sess = append(sess, st.Sessions...)
		}
	}
	if len(sess) != len(ev.Verdicts) {
		bad.add("evidence.steps", "%d sessions for %d runs", len(sess), len(ev.Verdicts))
		return bad
	}
	for i, l := range ev.Verdicts {
		b := rig.beh[sess[i]]
		want := router.Label(b.verdict)
		switch {
		case b.fail:
			want = router.LabelError
		case b.hang:
			want = router.LabelTimeout
		case c.mode == "delegation":
			want = router.LabelOK
		}
		if l != want && l != router.LabelCancelled && !(want == router.LabelTimeout && l == router.LabelError) {
			bad.add("evidence.verdicts", "run %d on session %d labelled %s; its worker sent %s", i, sess[i], l, want)
		}
	}
	if l := ev.Lone; l != nil && l.Confidence != fakeConfidence {
		bad.add("evidence.lone.confidence", "%v; the one answer's worker reported %v", l.Confidence, fakeConfidence)
	}
	if c.mode != "delegation" || len(resp.Result) == 0 || string(resp.Result) == "null" {
		return bad
	}
	got := resultKey(resp.Result, c.numeric)
	for i, l := range ev.Verdicts {
		b := rig.beh[sess[i]]
		if l != router.LabelOK {
			continue
		}
		k := b.text
		if c.numeric {
			f, ok := numberOf(b.num)
			if !ok {
				continue
			}
			k = fmt.Sprint(f)
		}
		if k != got {
			continue
		}
		// 9.4: a grouped call's result is the first output of its
		// group, in run order.
		if g := ev.Grouping; g != nil && i < len(g.Groups) && slices.Contains(g.Groups[:i], g.Groups[i]) {
			bad.add("result", "%s is run %d's, not the first of its group %v", resp.Result, i, g.Groups)
		}
		return bad
	}
	bad.add("result", "%s is no answer a run that answered gave", resp.Result)
	return bad
}

// caseGrouper groups text outputs equal but for case and surrounding
// space.
type caseGrouper struct{}

func (caseGrouper) Group(_ context.Context, outputs []json.RawMessage) (*consensus.Grouping, error) {
	norm := make([]string, len(outputs))
	answers := make([]any, len(outputs))
	for i, o := range outputs {
		if o == nil {
			continue
		}
		answers[i] = o
		var s string
		_ = json.Unmarshal(o, &s)
		norm[i] = strings.ToLower(strings.TrimSpace(s))
	}
	g, err := consensus.GroupBySimilarity(answers, 1, func(i, j int) float64 {
		if norm[i] == norm[j] {
			return 1
		}
		return 0
	})
	if g != nil {
		g.Method = "case-insensitive equality"
	}
	return g, err
}
