package trustmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer srv.Close()

	claimed := `{"n":12345678901234567891,"s":"17 * 3 = 51"}`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"validate_claim",` +
		`"arguments":{"claimed_result":` + claimed + `,"policy":"fast"}}}`
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Result json.RawMessage `json:"result"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || resp.StatusCode != http.StatusOK || msg.Result.IsError {
		t.Fatalf("status %d, answer %s (%v)", resp.StatusCode, raw, err)
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
