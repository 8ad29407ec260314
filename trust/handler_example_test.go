package trust_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// Serve a trust Service with NewHandler and call it with a Client: the
// Client is itself a Caller, so code written against the in-process
// Service runs against a remote one.
func ExampleNewHandler() {
	svc, err := trust.New(unanimous{})
	if err != nil {
		panic(err)
	}
	h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := trust.NewClient(srv.URL, trust.WithAPIKey("demo-key"))
	if err != nil {
		panic(err)
	}
	ctx := router.WithTraceID(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736")
	resp, err := c.Call(ctx, &trust.Request{
		Mode:   trust.ModeValidation,
		Policy: trust.PolicySafe,
		Task:   trust.Task{Type: "summary", ClaimedResult: json.RawMessage(`"Paris is the capital of France."`)},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, resp.Evidence.Redundancy, resp.TraceID)

	// Invalid input comes back as a *trust.Error naming the field.
	_, err = c.Call(ctx, &trust.Request{Mode: trust.ModeArbitration, Policy: trust.PolicyOracle})
	var p *trust.Error
	if errors.As(err, &p) {
		fmt.Println(p.Status, p.Errors[0].Field)
	}
	// Output:
	// VALID 3 4bf92f3577b34da6a3ce929d0e0e4736
	// 400 task.claimed_result
}
