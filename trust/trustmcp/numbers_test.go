package trustmcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestTools_numbersAsSent calls validate_claim over Streamable HTTP with a
// claimed_result holding an integer that no float64 holds: the worker
// judges the claim the client sent, as the HTTP trust route passes it on,
// not one with the nearest float64 in its place, and the answer's result
// (structuredContent) repeats it as sent.
func TestTools_numbersAsSent(t *testing.T) {
	var mu sync.Mutex
	var judged []string
	worker := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		judged = append(judged, string(job.Claim.Output))
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9}, nil
	})
	engine, err := router.NewEngine([]router.Session{{ID: 1, Pool: "a", Worker: worker}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(trustmcp.Config{Caller: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := statelessHTTP(t, s)

	claimed := `{"n":12345678901234567891,"s":"17 * 3 = 51"}`
	var msg struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Result json.RawMessage `json:"result"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if raw := rawToolCall(t, srv.URL, "validate_claim", `{"claimed_result":`+claimed+`,"policy":"fast"}`, &msg); msg.Result.IsError {
		t.Fatalf("answer %s, want a result", raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{claimed}, judged); diff != "" {
		t.Errorf("claims judged (-sent +judged):\n%s", diff)
	}
	if got := string(msg.Result.StructuredContent.Result); got != claimed {
		t.Errorf("structuredContent.result = %s, want the claim as sent, %s", got, claimed)
	}
}
