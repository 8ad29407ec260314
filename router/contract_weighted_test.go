package router_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

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

// TestContract_weightedOverLoopback: a version 3 validation with
// consensus.aggregation "weighted" over real HTTP, whose winner,
// agreement and confidence are recomputed from the response's JSON alone:
// each run's label, weight and reliability, the consensus block's
// agreeing replicas, reputation snapshot and calibration basis.
func TestContract_weightedOverLoopback(t *testing.T) {
	e := offEngine(t)
	learnOn(t, e, 0, 150) // sessions of different reliability, learned
	reportOn(t, e, 0, 30) // and outcomes, which calibrate
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	disagreed := 0
	for i := range 40 {
		body := fmt.Sprintf(`{"claim":{"type":"summary","output":"weighted %d"},"policy":{},
			"consensus":{"replicas":5,"aggregation":"weighted","weight_by":"reputation","disagreement_policy":"return_all"}}`, i)
		status, v := postV3(t, srv.URL, "/api/v3/validate", body)
		if status != http.StatusOK {
			t.Fatalf("status %d: %v", status, v)
		}
		c := v["consensus"].(map[string]any)
		if c["strategy"] != "weighted" || c["weight_by"] != "reputation" {
			t.Fatalf("consensus %v: want strategy weighted, weight_by reputation", c)
		}
		rep := c["reputation"].(map[string]any)
		scores := map[string]float64{}
		votes := 0
		for _, r := range v["evidence"].(map[string]any)["runs"].([]any) {
			run := r.(map[string]any)
			w, ok := run["weight"].(float64)
			if !ok {
				continue
			}
			votes++
			if got := consensus.Weight(run["reliability"].(float64)); math.Abs(got-w) > 1e-12 {
				t.Errorf("run %v: weight %v, its reliability weighs %v", run["replica"], w, got)
			}
			scores[run["label"].(string)] += w
		}
		// The winner: the label of largest summed weight.
		var win string
		var ss []float64
		for l, s := range scores {
			if win == "" || s > scores[win] || s == scores[win] && l == "INVALID" {
				win = l
			}
		}
		wi := 0
		for l, s := range scores {
			if l == win {
				wi = len(ss)
			}
			ss = append(ss, s)
		}
		if v["verdict"] != win {
			t.Errorf("call %d: verdict %v, recomputed %s from %v", i, v["verdict"], win, scores)
		}
		tempering := consensus.Tempering(votes, rep["correlation"].(float64))
		if math.Abs(tempering-rep["tempering"].(float64)) > 1e-12 {
			t.Errorf("call %d: tempering %v, recomputed %v", i, rep["tempering"], tempering)
		}
		// The confidence: the weighted one, no higher than the
		// Posterior of the same votes, read on the calibration points.
		agreeing := len(c["agreeing"].([]any))
		uncalibrated := min(consensus.Credence(ss, wi, tempering), consensus.Posterior(agreeing, votes-agreeing))
		cal := c["calibration"].(map[string]any)
		if cal["tier"] != router.CalibrationTier || cal["basis"] != reputation.BasisOutcomes || !(cal["outcomes"].(float64) > 0) {
			t.Errorf("call %d: calibration %v, want tier %s calibrated on outcomes", i, cal, router.CalibrationTier)
		}
		if math.Abs(uncalibrated-cal["uncalibrated"].(float64)) > 1e-12 {
			t.Errorf("call %d: uncalibrated %v, recomputed %v", i, cal["uncalibrated"], uncalibrated)
		}
		var points []reputation.Point
		for _, p := range cal["points"].([]any) {
			pt := p.(map[string]any)
			points = append(points, reputation.Point{Score: pt["score"].(float64), Rate: pt["rate"].(float64)})
		}
		if got := reputation.Interpolate(points, uncalibrated); math.Abs(got-v["confidence"].(float64)) > 1e-12 {
			t.Errorf("call %d: confidence %v, recomputed %v from %v on %v", i, v["confidence"], got, uncalibrated, points)
		}
		if got := float64(agreeing) / float64(votes); math.Abs(got-c["agreement"].(float64)) > 1e-12 {
			t.Errorf("call %d: agreement %v, recomputed %v", i, c["agreement"], got)
		}
		if len(scores) > 1 {
			disagreed++
		}
	}
	if disagreed == 0 {
		t.Error("no call split its panel: the recomputation was never put to the test")
	}

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
