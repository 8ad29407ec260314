package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// A caller over HTTP reports the outcome of its own version 3 call by the
// trace id the call ran under; a repeat adds nothing and is answered
// alike, and a trace id that names none of the caller's calls is
// ErrUnknownCall.
func ExampleClient_Feedback() {
	valid := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 3, valid, valid, valid))
	if err != nil {
		log.Fatal(err)
	}
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"secret": "acme"})))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("secret"))
	if err != nil {
		log.Fatal(err)
	}

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), trace)
	_, err = c.ValidateV3(ctx, &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"The report covers Q3."`)}},
		Consensus:    router.ConsensusRequest{Replicas: 3},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Feedback(ctx, trace, true))
	fmt.Println(c.Feedback(ctx, trace, true))
	err = c.Feedback(ctx, "0af7651916cd43dd8448eb211c80319c", true)
	var p *router.Error
	fmt.Println(errors.Is(err, router.ErrUnknownCall), errors.As(err, &p) && p.Status == 404, p.Code)
	// Output:
	// <nil>
	// <nil>
	// true true unknown_call
}
