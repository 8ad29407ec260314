package trust_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// A host checks at start-up which policies its router can never serve:
// three sessions run fast, safe and adaptive calls, but not oracle's five
// replicas, whose calls would each be a 400 naming policy.
func ExampleService_Unservable() {
	w := routertest.Verdict(router.VerdictValid)
	engine, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	never, err := svc.Unservable(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("never served:", never)
	// Output:
	// never served: [oracle]
}
