package router_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
)

// numberWorker answers a validation as offWorker does, and a delegation
// with 100, or on the tasks it errs on (a function of the session and
// the objective alone) with 100 plus ten times its session: sessions
// err as often as offErrRates says.
func numberWorker(rate uint32) router.Worker {
	validate := offWorker(rate)
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if job.Kind != router.KindDelegate {
			return validate.Work(ctx, job)
		}
		h := fnv.New32a()
		fmt.Fprintf(h, "%d/%s", job.SessionID, job.Objective)
		x := 100
		if h.Sum32()%100 < rate*3 {
			x += 10 * int(job.SessionID)
		}
		return &router.Result{Output: x, Confidence: 0.5}, nil
	})
}

// TestContract_weightedMedianOverLoopback: version 3 delegations under
// consensus.aggregation "median" with weight_by "reputation", through the
// remote Client to the Handler over loopback, each response's aggregate,
// agreeing replicas, agreement and confidence recomputed from its JSON
// alone: each run's output and weight, the block's numbers, tolerance
// and reputation snapshot.
func TestContract_weightedMedianOverLoopback(t *testing.T) {
	var sessions []router.Session
	for i, r := range offErrRates {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: numberWorker(r)})
	}
	e := newEngine(t, sessions)
	learnOn(t, e, 0, 150) // sessions of different reliability, learned
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}

	split := 0
	for i := range 40 {
		req := &router.DelegateV3Request{
			DelegateTask: router.DelegateTask{Objective: fmt.Sprintf("count %d", i)},
			Consensus: router.ConsensusRequest{Replicas: 5, Aggregation: router.AggregationMedian, WeightBy: router.WeightByReputation,
				Tolerance: &router.Tolerance{Absolute: 5}, DisagreementPolicy: router.DisagreeReturnAll},
		}
		resp, err := c.DelegateV3(context.Background(), req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Consensus.Strategy != router.AggregationMedian || resp.Consensus.WeightBy != router.WeightByReputation || resp.Consensus.Reputation == nil {
			t.Fatalf("call %d: consensus %+v, want strategy median weighed by reputation", i, resp.Consensus)
		}
		for j, r := range resp.Evidence.Runs {
			if r.Weight == nil || r.Reliability == nil {
				t.Fatalf("call %d: run %d records no weight or reliability", i, j)
			}
		}
		recomputeNumeric(t, resp)
		if resp.Consensus.Agreement < 1 {
			split++
		}
	}
	if split == 0 {
		t.Error("no call split its panel: the recomputation was never put to the test")
	}
}

// wordyWorker is w, but for the delegations on which session answers in
// words (rate percent of them, a function of the session and the
// objective alone): there it answers "about" and w's number, no vote.
func wordyWorker(w router.Worker, rate uint32) router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		res, err := w.Work(ctx, job)
		if err != nil || job.Kind != router.KindDelegate {
			return res, err
		}
		h := fnv.New32a()
		fmt.Fprintf(h, "words %d/%s", job.SessionID, job.Objective)
		if h.Sum32()%100 < rate {
			res.Output = fmt.Sprintf("about %v", res.Output)
		}
		return res, nil
	})
}

// TestContract_weightedMedianFailuresOverLoopback: weighted median
// delegations over real HTTP with sessions that fail on some objectives
// and answer others in words,
// in every failure mode, under return_all and best_effort, each answer
// recomputed from its JSON alone (a 200's body, or a 409's extra): under
// negative evidence each failed run records its reliability and weight,
// counts against the agreeing numbers, and wins when it weighs as much;
// a run that answered in words is no vote and records no weight.
func TestContract_weightedMedianFailuresOverLoopback(t *testing.T) {
	for _, mode := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
		for _, policy := range []router.DisagreementPolicy{router.DisagreeReturnAll, router.DisagreeBestEffort} {
			t.Run(string(mode)+"/"+string(policy), func(t *testing.T) {
				var sessions []router.Session
				for i, r := range offErrRates {
					sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: failingWorker(wordyWorker(numberWorker(r), 15), 25)})
				}
				e := newEngine(t, sessions, router.WithFailureMode(mode), router.WithHealth(1000, 0))
				learnOn(t, e, 0, 150) // sessions of different reliability, learned
				h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				counted := 0
				for i := range 60 {
					body := fmt.Sprintf(`{"objective":"count %d","consensus":{"replicas":5,"aggregation":"median","weight_by":"reputation",
						"tolerance":{"absolute":5},"disagreement_policy":%q}}`, i, policy)
					status, v := postV3(t, srv.URL, "/api/v3/delegate", body)
					var raw []byte
					switch status {
					case http.StatusOK:
						raw = mustJSON(t, v)
					case http.StatusConflict, http.StatusBadGateway:
						raw = mustJSON(t, v["extra"])
					default:
						t.Fatalf("call %d: status %d, %v", i, status, v)
					}
					t.Run(fmt.Sprintf("call %d", i), func(t *testing.T) {
						if recomputeNumericJSON(t, raw) {
							counted++
						}
					})
				}
				if mode == consensus.FailuresNegative && counted == 0 {
					t.Error("no failed run counted under negative evidence: the recomputation was never put to the test")
				}
				if mode == consensus.FailuresNonVotes && counted != 0 {
					t.Errorf("%d calls counted their failed runs, which are no votes", counted)
				}
			})
		}
	}
}
