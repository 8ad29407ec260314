package trust_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// A caller over HTTP reports the outcome of its own trust call by the
// trace_id of the response (or the receipt_id of its receipt); a repeat
// adds nothing and is answered alike, and an id that names none of the
// caller's calls is ErrUnknownCall.
func ExampleClient_Feedback() {
	valid := routertest.Verdict(router.VerdictValid)
	engine, err := router.NewEngine(routertest.Sessions(1, 3, valid, valid, valid))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"secret": "acme"})))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := trust.NewClient(srv.URL, trust.WithAPIKey("secret"))
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	resp, err := c.Call(ctx, &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Paris is in France."), ClaimedResult: []byte(`"Paris is French."`)}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Feedback(ctx, resp.TraceID, true))
	fmt.Println(c.Feedback(ctx, resp.TraceID, true))
	err = c.Feedback(ctx, "0af7651916cd43dd8448eb211c80319c", true)
	fmt.Println(errors.Is(err, trust.ErrUnknownCall))
	// Output:
	// <nil>
	// <nil>
	// true
}
