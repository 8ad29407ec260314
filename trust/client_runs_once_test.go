package trust_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// brokenGrouper fails every grouping, as a grouper whose embeddings
// endpoint is down.
type brokenGrouper struct{}

func (brokenGrouper) Group(context.Context, []json.RawMessage) (*consensus.Grouping, error) {
	return nil, errors.New("embedding endpoint down")
}

// countedWorkers returns workers answering as probeWorker does for each
// wording, and the count of the jobs they ran.
func countedWorkers(wordings []string) ([]router.Worker, *atomic.Int64) {
	var ran atomic.Int64
	workers := make([]router.Worker, len(wordings))
	for i, a := range wordings {
		w := probeWorker(a)
		workers[i] = router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
			ran.Add(1)
			return w.Work(ctx, job)
		})
	}
	return workers, &ran
}

// TestClient_failureAfterRunsRunsOnce: a call that fails once its runs
// ran (the grouper of a free-text delegation down) or that cannot be
// served (a judged delegation with too few sessions to judge) runs over
// HTTP, through a Client that retries three times, the jobs one call in
// process runs: none, when it cannot be served. A 502 or a 503 would
// be retried, each retry running its jobs again.
func TestClient_failureAfterRunsRunsOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wordings []string
		opts     []trust.Option
		req      *trust.Request
		want     int64
	}{
		{"the grouper down", wordings, []trust.Option{trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithGrouper(brokenGrouper{})},
			probeRequest(trust.PolicySafe, ""), 3},
		{"too few sessions to judge", wordings[:3], []trust.Option{trust.WithSessionPool(1, 2, 3)},
			probeRequest(trust.PolicySafe, trust.AgreementJudged), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			workers, ran := countedWorkers(tc.wordings)
			svc, err := trust.New(newEngine(t, workers...), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "acme"})))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			c, err := trust.NewClient(srv.URL, trust.WithAPIKey("k"),
				trust.WithRetry(router.RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Call(t.Context(), tc.req); err == nil {
				t.Fatal("the call succeeded; want it to fail")
			}
			if got := ran.Load(); got != tc.want {
				t.Errorf("%d jobs ran over HTTP, want %d", got, tc.want)
			}
		})
	}
}
