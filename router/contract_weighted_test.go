package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// postV3 posts body to path over loopback and returns the status and the
// decoded JSON.
func postV3(t *testing.T, url, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
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

// failingWorker is w, but for the claims (or the objectives of a
// delegation) on which session fails (rate percent of them, a function of
// the session and the claim alone): there it returns an error, and the
// run reads ERROR.
func failingWorker(w router.Worker, rate uint32) router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		task := job.Objective
		if job.Claim != nil {
			task = string(job.Claim.Output)
		}
		h := fnv.New32a()
		fmt.Fprintf(h, "fail %d/%s", job.SessionID, task)
		if h.Sum32()%100 < rate {
			return nil, errors.New("worker down")
		}
		return w.Work(ctx, job)
	})
}

// recomputeWeighted recomputes a weighted call's winner, agreement and
// confidence from its runs and consensus block as the JSON holds them
// (a 200's evidence.runs and consensus, or the extra of a problem), and
// reports each figure that differs from the one stated. verdict is the
// response's verdict and confidence ("" and 0 for a problem). It returns
// how many groups the votes formed, failures included, counts in
// calibrated the calls read on calibration points, and in sloped the runs
// whose confidence moved their weight.
func recomputeWeighted(t *testing.T, call string, runs []any, c map[string]any, verdict string, confidence float64, calibrated, sloped *int) int {
	t.Helper()
	if c["strategy"] != "weighted" || c["weight_by"] != "reputation" {
		t.Fatalf("%s: consensus %v: want strategy weighted, weight_by reputation", call, c)
	}
	rep := c["reputation"].(map[string]any)
	scores := map[string]float64{} // by label; "failed" for the failed runs
	votes := 0
	for _, r := range runs {
		run := r.(map[string]any)
		w, ok := run["weight"].(float64)
		if !ok {
			continue
		}
		votes++
		// The vote's evidence: its session's record, moved by its
		// reported confidence under the session's confidence slope.
		rel := consensus.Reliabilities{Sessions: map[int64]float64{1: run["reliability"].(float64)}}
		if cs, ok := run["confidence_slope"].(map[string]any); ok {
			rel.Confidence = map[int64]consensus.ConfidenceSlope{1: {Slope: cs["slope"].(float64), Center: cs["center"].(float64)}}
			*sloped++
		}
		conf, _ := run["confidence"].(float64)
		if got := rel.Evidence(consensus.Vote{Session: 1, Confidence: conf}); math.Abs(got-w) > 1e-12 {
			t.Errorf("%s: run %v: weight %v, its reliability and confidence weigh %v", call, run["replica"], w, got)
		}
		l := run["label"].(string)
		if l == "TIMEOUT" || l == "ERROR" {
			l = "failed"
		}
		scores[l] += w
	}
	// The winner: the label of largest summed weight; INVALID wins a tie
	// with VALID, and the failed runs win any tie.
	var win string
	for l, s := range scores {
		if l != "failed" && (win == "" || s > scores[win] || s == scores[win] && l == "INVALID") {
			win = l
		}
	}
	if f, ok := scores["failed"]; ok && win != "" && f >= scores[win] {
		win = ""
	}
	var ss []float64
	wi := -1
	for l, s := range scores {
		if l == win {
			wi = len(ss)
		}
		ss = append(ss, s)
	}
	agreeingList, _ := c["agreeing"].([]any) // null without a winner
	agreeing := len(agreeingList)
	if win == "" {
		if agreeing != 0 || c["confidence"].(float64) != 0 || verdict != "" {
			t.Errorf("%s: no group wins %v, yet the call states verdict %q, %d agreeing, confidence %v", call, scores, verdict, agreeing, c["confidence"])
		}
		return len(scores)
	}
	if verdict != "" && verdict != win {
		t.Errorf("%s: verdict %v, recomputed %s from %v", call, verdict, win, scores)
	}
	tempering := consensus.Tempering(votes, rep["correlation"].(float64))
	if math.Abs(tempering-rep["tempering"].(float64)) > 1e-12 {
		t.Errorf("%s: tempering %v, recomputed %v from %d weighted runs", call, rep["tempering"], tempering, votes)
	}
	// The confidence: with no calibration point the conservative
	// number, the weighted credence no higher than the Posterior of the
	// same votes; else the weighted credence read on the calibration
	// points the block names.
	uncalibrated := consensus.Credence(ss, wi, tempering)
	conservative := min(uncalibrated, consensus.Posterior(agreeing, votes-agreeing))
	cal, _ := c["calibration"].(map[string]any)
	if cal == nil || cal["tier"] != router.CalibrationTier {
		t.Fatalf("%s: calibration %v, want the basis of tier %s", call, cal, router.CalibrationTier)
	}
	if math.Abs(uncalibrated-cal["uncalibrated"].(float64)) > 1e-12 {
		t.Errorf("%s: uncalibrated %v, recomputed %v from %v", call, cal["uncalibrated"], uncalibrated, scores)
	}
	if math.Abs(conservative-cal["conservative"].(float64)) > 1e-12 {
		t.Errorf("%s: conservative %v, recomputed %v from %v", call, cal["conservative"], conservative, scores)
	}
	var points []reputation.Point
	for _, p := range cal["points"].([]any) {
		pt := p.(map[string]any)
		points = append(points, reputation.Point{Score: pt["score"].(float64), Rate: pt["rate"].(float64)})
	}
	if (cal["basis"] == reputation.BasisOutcomes) != (len(points) > 0) {
		t.Errorf("%s: calibration %v: basis and points disagree", call, cal)
	}
	if len(points) > 0 {
		*calibrated++
	}
	want := conservative
	if len(points) > 0 {
		want = reputation.Interpolate(points, uncalibrated)
	}
	if got := c["confidence"].(float64); math.Abs(got-want) > 1e-12 {
		t.Errorf("%s: consensus confidence %v, recomputed %v from %v on %v", call, got, want, uncalibrated, points)
	}
	if verdict != "" && math.Abs(confidence-want) > 1e-12 {
		t.Errorf("%s: confidence %v, recomputed %v from %v", call, confidence, want, scores)
	}
	if got := float64(agreeing) / float64(votes); math.Abs(got-c["agreement"].(float64)) > 1e-12 {
		t.Errorf("%s: agreement %v, recomputed %v", call, c["agreement"], got)
	}
	return len(scores)
}

// TestContract_weightedOverLoopback: a version 3 validation with
// consensus.aggregation "weighted" over real HTTP, whose winner,
// agreement and confidence are recomputed from the response's JSON alone:
// each run's label, weight and reliability, the consensus block's
// agreeing replicas, reputation snapshot and calibration basis, once
// outcomes were reported, and each run's confidence slope, learned from
// workers whose reported confidence tells their right votes from their
// wrong ones. Every failure mode, with
// sessions that fail on some claims, under return_all and best_effort; a
// call refused for its failures (409) is recomputed from the problem's
// extra.
func TestContract_weightedOverLoopback(t *testing.T) {
	for _, mode := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
		for _, policy := range []router.DisagreementPolicy{router.DisagreeReturnAll, router.DisagreeBestEffort} {
			t.Run(string(mode)+"/"+string(policy), func(t *testing.T) {
				var sessions []router.Session
				for i, r := range offErrRates {
					sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: failingWorker(confidentWorker(offWorker(r)), 15)})
				}
				clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				e := newEngine(t, sessions, router.WithEngineClock(func() time.Time { return clock }),
					router.WithFailureMode(mode), router.WithHealth(1000, 0))
				learnOn(t, e, 0, 150) // sessions of different reliability, learned
				reportOn(t, e, 0, 30) // and outcomes, which calibrate
				testWeightedCalls(t, e, policy, mode)
			})
		}
	}
}

func testWeightedCalls(t *testing.T, e *router.Engine, policy router.DisagreementPolicy, mode consensus.FailureMode) {
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	split, failedWeighed, calibrated, sloped := 0, 0, 0, 0
	for i := range 60 {
		body := fmt.Sprintf(`{"claim":{"type":"summary","output":"weighted %d"},"policy":{},
			"consensus":{"replicas":5,"aggregation":"weighted","weight_by":"reputation","disagreement_policy":%q}}`, i, policy)
		status, v := postV3(t, srv.URL, "/api/v3/validate", body)
		call := fmt.Sprintf("call %d (status %d)", i, status)
		var groups int
		switch status {
		case http.StatusOK:
			verdict, _ := v["verdict"].(string)
			groups = recomputeWeighted(t, call, v["evidence"].(map[string]any)["runs"].([]any), v["consensus"].(map[string]any), verdict, v["confidence"].(float64), &calibrated, &sloped)
		case http.StatusConflict, http.StatusBadGateway:
			x := v["extra"].(map[string]any)
			groups = recomputeWeighted(t, call, x["runs"].([]any), x["consensus"].(map[string]any), "", 0, &calibrated, &sloped)
		default:
			t.Fatalf("%s: %v", call, v)
		}
		if groups > 1 {
			split++
		}
		if mode == consensus.FailuresNegative {
			for _, r := range runsOf(v) {
				run := r.(map[string]any)
				if l := run["label"]; (l == "ERROR" || l == "TIMEOUT") && run["weight"] != nil {
					failedWeighed++
				}
			}
		}
	}
	if split == 0 {
		t.Error("no call split its panel: the recomputation was never put to the test")
	}
	if mode == consensus.FailuresNegative && failedWeighed == 0 {
		t.Error("no failed run carried a weight under negative evidence")
	}
	if calibrated == 0 {
		t.Error("no call was read on calibration points: the calibration was never put to the test")
	}
	if sloped == 0 {
		t.Error("no run's confidence moved its weight: the confidence slopes were never put to the test")
	}
}

// confidentWorker is w, reporting a confidence that tells its right
// votes (VALID: offWorker's claims are all valid) from its wrong ones:
// drawn in [0.6, 0.99) for a VALID verdict and in [0.5, 0.7) for an
// INVALID one, a function of the session and the claim alone.
func confidentWorker(w router.Worker) router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		res, err := w.Work(ctx, job)
		if err != nil {
			return res, err
		}
		h := fnv.New32a()
		fmt.Fprintf(h, "confidence %d/%s", job.SessionID, job.Claim.Output)
		u := float64(h.Sum32()%1000) / 1000
		res.Confidence = 0.6 + 0.39*u
		if res.Verdict == router.VerdictInvalid {
			res.Confidence = 0.5 + 0.2*u
		}
		return res, nil
	})
}

// runsOf returns the runs of a response or of a problem's extra.
func runsOf(v map[string]any) []any {
	if ev, ok := v["evidence"].(map[string]any); ok {
		return ev["runs"].([]any)
	}
	if x, ok := v["extra"].(map[string]any); ok {
		return x["runs"].([]any)
	}
	return nil
}

func TestContract_weightedRefusesOtherWeights(t *testing.T) {
	h, err := router.NewHandler(offEngine(t), router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// weight_by values the interface names but the router does not offer.
	for _, by := range []string{"stake", "latency", "cost"} {
		body := `{"claim":{"type":"summary","output":"x"},"policy":{},"consensus":{"replicas":3,"aggregation":"weighted","weight_by":"` + by + `"}}`
		status, v := postV3(t, srv.URL, "/api/v3/validate", body)
		errs, _ := v["errors"].([]any)
		if status != http.StatusBadRequest || len(errs) != 1 || errs[0].(map[string]any)["field"] != "consensus.weight_by" {
			t.Errorf("weight_by %s: status %d, %v; want 400 naming consensus.weight_by", by, status, v)
		}
	}
}
