package router_test

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// recomputeMajority recomputes a majority block's agreement and
// confidence from its JSON alone: its verdicts, its agreeing replicas and
// its failures member (absent: non_votes), and reports each figure that
// differs from the one stated.
func recomputeMajority(t *testing.T, call string, c map[string]any) {
	t.Helper()
	mode := consensus.FailuresNonVotes
	if f, ok := c["failures"]; ok {
		mode = consensus.FailureMode(f.(string))
	}
	cast, failed := 0, 0
	for _, v := range c["verdicts"].([]any) {
		switch l := consensus.Label(v.(string)); {
		case l == consensus.LabelCancelled:
		case l.Failed():
			failed++
		default:
			cast++
		}
	}
	agreeing := len(c["agreeing"].([]any))
	against := cast - agreeing
	if mode == consensus.FailuresNegative {
		against += failed
	}
	if got, want := c["agreement"].(float64), float64(agreeing)/float64(agreeing+against); math.Abs(got-want) > 1e-12 {
		t.Errorf("%s: agreement %v, recomputed %v from %v", call, got, want, c)
	}
	if got, want := c["confidence"].(float64), consensus.Posterior(agreeing, against); math.Abs(got-want) > 1e-12 {
		t.Errorf("%s: confidence %v, recomputed %v from %v", call, got, want, c)
	}
}

// TestContract_majorityFailuresOverLoopback: a version 3 majority
// validation whose panel holds a failed run, over real HTTP under each
// failure mode: its agreement and confidence are recomputed from the
// consensus block's JSON alone, which names the failure mode when it is
// negative_evidence (and says nothing under the default non_votes); a
// call refused for its failure (409 under fail_hard) is recomputed from
// the problem's extra.
func TestContract_majorityFailuresOverLoopback(t *testing.T) {
	v, e := routertest.Verdict(router.VerdictValid), routertest.Fail(errDown)
	// The late workers answer after the instant ones, so that an early
	// quorum cannot hide the failure. The delay orders the runs; no test
	// asserts a duration.
	lateV, lateE := routertest.Slow(v, 100*time.Millisecond), routertest.Slow(e, 100*time.Millisecond)
	tests := []struct {
		name    string
		workers []router.Worker
		policy  router.DisagreementPolicy
		// The figures of each mode.
		status     map[consensus.FailureMode]int
		agreement  map[consensus.FailureMode]float64
		confidence map[consensus.FailureMode]float64
	}{
		{"safe", []router.Worker{v, e, lateV}, router.DisagreeBestEffort,
			map[consensus.FailureMode]int{consensus.FailuresNonVotes: http.StatusOK, consensus.FailuresNegative: http.StatusOK},
			map[consensus.FailureMode]float64{consensus.FailuresNonVotes: 1, consensus.FailuresNegative: 2.0 / 3},
			map[consensus.FailureMode]float64{consensus.FailuresNonVotes: 0.875, consensus.FailuresNegative: 0.6875}},
		{"oracle", []router.Worker{v, v, v, lateE, v}, router.DisagreeFailHard,
			map[consensus.FailureMode]int{consensus.FailuresNonVotes: http.StatusOK, consensus.FailuresNegative: http.StatusConflict},
			map[consensus.FailureMode]float64{consensus.FailuresNonVotes: 1, consensus.FailuresNegative: 0.8},
			map[consensus.FailureMode]float64{consensus.FailuresNonVotes: 31.0 / 32, consensus.FailuresNegative: 57.0 / 64}},
	}
	for _, tt := range tests {
		for _, mode := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				e := newEngine(t, routertest.Sessions(1, len(tt.workers), tt.workers...), router.WithFailureMode(mode))
				h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				body := fmt.Sprintf(`{"claim":{"type":"summary","output":"x"},"policy":{"timeout_ms":5000},
					"consensus":{"replicas":%d,"disagreement_policy":%q}}`, len(tt.workers), tt.policy)
				status, resp := postV3(t, srv.URL, "/api/v3/validate", body)
				if status != tt.status[mode] {
					t.Fatalf("status %d, want %d: %v", status, tt.status[mode], resp)
				}
				c, ok := resp["consensus"].(map[string]any)
				if status != http.StatusOK {
					c, ok = resp["extra"].(map[string]any)["consensus"].(map[string]any)
				}
				if !ok {
					t.Fatalf("no consensus block: %v", resp)
				}
				f, named := c["failures"]
				if want := mode == consensus.FailuresNegative; named != want || want && f != string(mode) {
					t.Errorf("failures %v (present %v), want %q named only under negative_evidence", f, named, mode)
				}
				if got := len(c["verdicts"].([]any)); got != len(tt.workers) {
					t.Fatalf("verdicts %v, want %d", c["verdicts"], len(tt.workers))
				}
				if c["agreement"] != tt.agreement[mode] || math.Abs(c["confidence"].(float64)-tt.confidence[mode]) > 1e-12 {
					t.Errorf("agreement %v, confidence %v; want %v, %v", c["agreement"], c["confidence"], tt.agreement[mode], tt.confidence[mode])
				}
				recomputeMajority(t, tt.name, c)
			})
		}
	}
}
