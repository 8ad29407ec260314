package router_test

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// numericCases are the contract cases of consensus.aggregation "median"
// and "median_of_means": every figure of each response is recomputed
// from its JSON alone (recomputeNumeric), on the Engine and through the
// Client over loopback to the Handler.
func numericCases() []contractCase {
	n := func(x any) router.Worker { return routertest.Answer(x) }
	S := routertest.Slow(n(99), time.Hour)
	lOK, lC, lE := router.LabelOK, router.LabelCancelled, router.LabelError
	E := routertest.Fail(errorString("worker down"))
	med, mom := router.AggregationMedian, router.AggregationMedianOfMeans
	recompute := func(result string, agreement float64) func(*testing.T, any) {
		return func(t *testing.T, resp any) {
			r := resp.(*router.DelegateV3Response)
			if !jsonSame(r.Result, result) || r.Consensus.Agreement != agreement {
				t.Errorf("result %s, agreement %v; want %s, %v", r.Result, r.Consensus.Agreement, result, agreement)
			}
			recomputeNumeric(t, r)
		}
	}
	return []contractCase{
		{name: "delegate_v3/median/18, 18.0 and \"18\" agree", workers: []router.Worker{n(18), n(json.RawMessage(`18.0`)), n("18")},
			call: dv3(`{"objective":"how many?","consensus":{"replicas":3,"aggregation":"median","disagreement_policy":"return_all"}}`),
			want: contractWant{labels: []router.Label{lOK, lOK, lOK}, strategy: med, calls: 3, check: recompute(`18`, 1)}},
		{name: "delegate_v3/median/within tolerance", workers: []router.Worker{n(18), n("18.4"), n(25), n(17.7), n("n/a")},
			call: dv3(`{"objective":"how many?","consensus":{"replicas":5,"aggregation":"median","tolerance":{"absolute":0.5},"disagreement_policy":"return_all"}}`),
			want: contractWant{labels: []router.Label{lOK, lOK, lOK, lOK, lOK}, low: true, strategy: med, calls: 5, check: recompute(`18`, 0.75)}},
		{name: "delegate_v3/median/relative tolerance, a failure", workers: []router.Worker{n(1000), E, n(1040), n(1100), n(990)},
			call: dv3(`{"objective":"price?","consensus":{"replicas":5,"aggregation":"median","tolerance":{"relative":0.05},"disagreement_policy":"return_all"}}`),
			want: contractWant{labels: []router.Label{lOK, lE, lOK, lOK, lOK}, low: true, strategy: med, calls: 5, check: recompute(`1000`, 0.75)}},
		{name: "delegate_v3/median_of_means/five", workers: []router.Worker{n(10), n(12), n(11), n(10), n(14)},
			call: dv3(`{"objective":"how many?","consensus":{"replicas":5,"aggregation":"median_of_means","tolerance":{"absolute":1},"disagreement_policy":"return_all"}}`),
			want: contractWant{labels: []router.Label{lOK, lOK, lOK, lOK, lOK}, low: true, strategy: mom, calls: 5, check: recompute(`11`, 0.8)}},
		{name: "delegate_v3/median_of_means/three", workers: []router.Worker{n(3), n(1), n(2)},
			call: dv3(`{"objective":"how many?","consensus":{"replicas":3,"aggregation":"median_of_means","tolerance":{"absolute":1},"disagreement_policy":"return_all"}}`),
			want: contractWant{labels: []router.Label{lOK, lOK, lOK}, strategy: mom, calls: 3, check: recompute(`2`, 1)}},
		// Two equal numbers of three: the third, whatever it is, cannot
		// move the median, so it is cut short.
		{name: "delegate_v3/median/early quorum", workers: []router.Worker{n(42), S, n("42")},
			call: dv3(`{"objective":"how many?","consensus":{"replicas":3,"aggregation":"median"}}`),
			want: contractWant{labels: []router.Label{lOK, lC, lOK}, strategy: med, calls: 3, cancelled: 1, check: recompute(`42`, 1)}},
		// Two numbers apart: the third decides, and is waited for.
		{name: "delegate_v3/median/no early quorum while the aggregate can move", workers: []router.Worker{n(41), routertest.Slow(n(42), 50*time.Millisecond), n(43)},
			call: dv3(`{"objective":"how many?","consensus":{"replicas":3,"aggregation":"median"}}`),
			want: contractWant{labels: []router.Label{lOK, lOK, lOK}, low: true, strategy: med, calls: 3, check: recompute(`42`, 1.0/3)}},
		{name: "delegate_v3/median/fail_hard", workers: []router.Worker{n(1), n(2), n(1)},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"aggregation":"median","disagreement_policy":"fail_hard"}}`),
			want: contractWant{status: 409, code: "disagreement", labels: []router.Label{lOK, lOK, lOK}, calls: 3}},
		{name: "delegate_v3/median/no number", workers: []router.Worker{n("a"), n("b"), n(map[string]int{"x": 1})},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"aggregation":"median"}}`),
			want: contractWant{status: 409, code: "disagreement", labels: []router.Label{lOK, lOK, lOK}, calls: 3}},

		// Refusals: 400 naming the field, and nothing runs.
		{name: "delegate_v3/tolerance with majority", workers: []router.Worker{n(1), n(1), n(1)},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"tolerance":{"absolute":1}}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.tolerance"}}},
		{name: "delegate_v3/tolerance with weighted", workers: []router.Worker{n(1), n(1), n(1)},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"aggregation":"weighted","tolerance":{"relative":0}}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.tolerance"}}},
		{name: "delegate_v3/negative tolerance", workers: []router.Worker{n(1), n(1), n(1)},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"aggregation":"median","tolerance":{"absolute":-1,"relative":-0.5}}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.tolerance.absolute", "consensus.tolerance.relative"}}},
		{name: "delegate_v3/median_of_means weighs nothing", workers: []router.Worker{n(1), n(1), n(1)},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"aggregation":"median_of_means","weight_by":"reputation"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.weight_by"}}},
		{name: "validate_v3/median of verdicts", workers: []router.Worker{n(1), n(1), n(1)},
			call: vv3(`{"claim":{"type":"summary","output":"x"},"consensus":{"replicas":3,"aggregation":"median_of_means","tolerance":{"absolute":1},"disagreement_policy":"return_all"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.aggregation"}}},
		{name: "factcheck/median of verdicts", workers: []router.Worker{n(1), n(1), n(1)},
			call: fc3(`{"claim":"c","consensus":{"replicas":3,"aggregation":"median"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.aggregation"}}},
	}
}

// errorString is an error with a fixed message.
type errorString string

func (e errorString) Error() string { return string(e) }

// recomputeNumeric recomputes every figure of a numeric delegation from
// the response's JSON alone (recomputeNumericJSON).
func recomputeNumeric(t *testing.T, resp *router.DelegateV3Response) {
	t.Helper()
	recomputeNumericJSON(t, mustJSON(t, resp))
}

// recomputeNumericJSON recomputes every figure of a numeric delegation
// from its JSON alone, raw a 200's body or the extra of a problem
// ({"runs": [...], "consensus": {...}}, which names no result): each
// replica's number from its run's output, the block's numbers, the
// aggregate (the lower median, or the lower median of the means of blocks
// dealt in turn), the agreeing replicas, agreement and confidence
// (consensus.Posterior, or under weight_by the Credence of the weights
// the runs record). A failed run that records a weight counts against
// (failures as negative evidence), and wins when it weighs at least as
// much as the agreeing numbers; each recorded weight is consensus.Weight
// of the reliability beside it. It returns whether the call had a
// failed run that counted.
func recomputeNumericJSON(t *testing.T, raw []byte) bool {
	t.Helper()
	type run struct {
		Label       string          `json:"label"`
		Output      json.RawMessage `json:"output"`
		Error       string          `json:"error"`
		Weight      *float64        `json:"weight"`
		Reliability *float64        `json:"reliability"`
	}
	var r struct {
		Result   json.RawMessage `json:"result"`
		Evidence struct {
			Runs []run `json:"runs"`
		} `json:"evidence"`
		Runs      []run `json:"runs"` // of a problem's extra
		Consensus struct {
			Strategy   string     `json:"strategy"`
			Agreement  float64    `json:"agreement"`
			Confidence float64    `json:"confidence"`
			Agreeing   []int      `json:"agreeing"`
			Numbers    []*float64 `json:"numbers"`
			Aggregate  *float64   `json:"aggregate"`
			Tolerance  *struct {
				Absolute float64 `json:"absolute"`
				Relative float64 `json:"relative"`
			} `json:"tolerance"`
			Reputation *struct {
				Correlation float64 `json:"correlation"`
				Tempering   float64 `json:"tempering"`
			} `json:"reputation"`
		} `json:"consensus"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	runs, fromProblem := r.Evidence.Runs, r.Evidence.Runs == nil
	if fromProblem {
		runs = r.Runs
	}
	c := r.Consensus
	if c.Tolerance == nil || c.Aggregate == nil || len(c.Numbers) != len(runs) {
		t.Fatalf("consensus %s: want tolerance, aggregate and one number per run", raw)
	}
	type num struct {
		x, w float64
	}
	var nums []num
	failed, failedScore := 0, 0.0
	for i, run := range runs {
		if run.Weight != nil && run.Reliability != nil && math.Abs(*run.Weight-consensus.Weight(*run.Reliability)) > 1e-12 {
			t.Errorf("run %d: weight %v, its reliability %v weighs %v", i, *run.Weight, *run.Reliability, consensus.Weight(*run.Reliability))
		}
		if (run.Label == "ERROR" || run.Label == "TIMEOUT") && run.Weight != nil {
			failed, failedScore = failed+1, failedScore+*run.Weight
		}
		x, err := consensus.ParseNumber(run.Output)
		voted := run.Label == "OK" && err == nil
		if voted != (c.Numbers[i] != nil) || voted && *c.Numbers[i] != x {
			t.Errorf("run %d: output %s, consensus.numbers[%d] %v", i, run.Output, i, c.Numbers[i])
		}
		if run.Label == "OK" && !voted && (run.Error == "" || run.Weight != nil || run.Reliability != nil) {
			t.Errorf("run %d: output %s holds no number, and its run says no reason (%q) or records a reliability or weight", i, run.Output, run.Error)
		}
		if voted {
			w := 1.0
			if run.Weight != nil {
				w = *run.Weight
			}
			nums = append(nums, num{x, w})
		}
	}
	lowerMedian := func(ns []num) float64 {
		ns = slices.Clone(ns)
		slices.SortStableFunc(ns, func(a, b num) int { return cmp.Compare(a.x, b.x) })
		var total, sum float64
		for _, n := range ns {
			total += n.w
		}
		if total == 0 { // every weight 0: they weigh alike
			for i := range ns {
				ns[i].w, total = 1, total+1
			}
		}
		for _, n := range ns {
			if sum += n.w; 2*sum >= total {
				return n.x
			}
		}
		return math.NaN()
	}
	m := lowerMedian(nums)
	if c.Strategy == "median_of_means" {
		k := min(3, len(nums))
		blocks := make([]num, k)
		for j, n := range nums {
			blocks[j%k].x += n.x
			blocks[j%k].w++
		}
		for b := range blocks {
			blocks[b] = num{blocks[b].x / blocks[b].w, 1}
		}
		m = lowerMedian(blocks)
	}
	if *c.Aggregate != m {
		t.Errorf("aggregate %v, recomputed %v", *c.Aggregate, m)
	}
	var agreeing []int
	var agree, against float64
	for i, p := range c.Numbers {
		if p == nil {
			continue
		}
		w := 1.0
		if runs[i].Weight != nil {
			w = *runs[i].Weight
		}
		if math.Abs(*p-m) <= max(c.Tolerance.Absolute, c.Tolerance.Relative*math.Abs(m)) {
			agreeing, agree = append(agreeing, i), agree+w
		} else {
			against += w
		}
	}
	a, d := len(agreeing), len(nums)-len(agreeing)+failed
	against += failedScore
	if failed > 0 && (c.Reputation == nil && failed >= a || c.Reputation != nil && failedScore >= agree) {
		// The failures win: no winner, no result.
		if len(c.Agreeing) != 0 || c.Confidence != 0 || !fromProblem && !jsonSame(r.Result, "null") {
			t.Errorf("the failures (%d, weighing %v) outweigh the agreeing numbers (%d, weighing %v), yet the call states agreeing %v, confidence %v, result %s",
				failed, failedScore, a, agree, c.Agreeing, c.Confidence, r.Result)
		}
		if c.Reputation != nil && c.Reputation.Tempering != consensus.Tempering(a+d, c.Reputation.Correlation) {
			t.Errorf("tempering %v, recomputed %v", c.Reputation.Tempering, consensus.Tempering(a+d, c.Reputation.Correlation))
		}
		return true
	}
	reported := 0
	for _, run := range runs {
		if run.Label != "CANCELLED" {
			reported++
		}
	}
	majority := 2*len(c.Agreeing) > reported
	// return_all names a result only when a strict majority agrees.
	if !fromProblem && !jsonSame(r.Result, string(mustJSON(t, m))) && !(jsonSame(r.Result, "null") && !majority) {
		t.Errorf("result %s, recomputed %v (agreeing %v of %d reported)", r.Result, m, c.Agreeing, reported)
	}
	if !slices.Equal(agreeing, c.Agreeing) {
		t.Errorf("agreeing %v, recomputed %v", c.Agreeing, agreeing)
	}
	if got := float64(a) / float64(a+d); got != c.Agreement {
		t.Errorf("agreement %v, recomputed %v", c.Agreement, got)
	}
	want := consensus.Posterior(a, d)
	if c.Reputation != nil {
		scores := []float64{agree}
		if d > 0 {
			scores = append(scores, against)
		}
		want = consensus.Credence(scores, 0, consensus.Tempering(a+d, c.Reputation.Correlation))
		if c.Reputation.Tempering != consensus.Tempering(a+d, c.Reputation.Correlation) {
			t.Errorf("tempering %v, recomputed %v", c.Reputation.Tempering, consensus.Tempering(a+d, c.Reputation.Correlation))
		}
	}
	if math.Abs(c.Confidence-want) > 1e-12 {
		t.Errorf("confidence %v, recomputed %v", c.Confidence, want)
	}
	return failed > 0
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
