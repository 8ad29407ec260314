package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/vouchkit/vouch/router"
)

// approver is a Service that only validates: it embeds the interface, so
// its other operations are absent (a call to one is answered 500).
type approver struct{ router.Service }

func (approver) ValidateV2(_ context.Context, req *router.ValidateV2Request) (*router.ValidateV2Response, error) {
	return &router.ValidateV2Response{
		RequestID: req.RequestID, Verdict: router.VerdictValid, Confidence: 0.9,
		Reasons:  []string{"output matches the claim"},
		Evidence: router.ValidateEvidence{Runs: []router.Run{}, Scores: []router.Score{}},
	}, nil
}

// Serve a Service with NewHandler and call it with a Client: the Client is
// itself a Service, so code written against one runs against the other.
func ExampleNewHandler() {
	h, err := router.NewHandler(approver{}, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := router.NewClient(srv.URL, router.WithAPIKey("demo-key"))
	if err != nil {
		panic(err)
	}
	resp, err := c.ValidateV2(context.Background(), &router.ValidateV2Request{
		SessionID: 7,
		ValidateTask: router.ValidateTask{
			RequestID: "req-1",
			Claim:     router.Claim{Type: "summary", Output: json.RawMessage(`"Paris is the capital of France."`)},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.RequestID, resp.Verdict, resp.Confidence, resp.Reasons)
	// Output: req-1 VALID 0.9 [output matches the claim]
}

// Errors come back as *router.Error, with the field paths of invalid input.
func ExampleClient_errors() {
	h, _ := router.NewHandler(approver{}, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})))
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, _ := router.NewClient(srv.URL, router.WithAPIKey("demo-key"))

	_, err := c.ValidateV2(context.Background(), &router.ValidateV2Request{SessionID: 7})
	var p *router.Error
	if errors.As(err, &p) {
		fmt.Println(p.Status, p.Code)
		for _, f := range p.Errors {
			fmt.Println(f.Field, f.Rule)
		}
	}
	// Output:
	// 400 invalid_request
	// claim.type required
	// claim.output present
}

// A worker on another machine: NewWorkerHandler serves it, HTTPWorker
// calls it, and the engine sees an ordinary Worker.
func ExampleHTTPWorker() {
	remote := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		return &router.Result{Verdict: router.VerdictValid, Reasons: []string{"checked " + job.TaskID}}, nil
	})
	srv := httptest.NewServer(router.NewWorkerHandler(remote))
	defer srv.Close()

	w := router.HTTPWorker(srv.URL)
	res, err := w.Work(context.Background(), &router.Job{Kind: router.KindValidate, Version: 2, SessionID: 3, TaskID: "t-1"})
	fmt.Println(res.Verdict, res.Reasons, err)
	// Output: VALID [checked t-1] <nil>
}
