package reputationtest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// A test that counts store round trips: a Book reads the reliabilities
// of a whole panel, in every level of its scope, with one Load.
func ExampleCountingStore() {
	store := new(reputationtest.CountingStore)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		log.Fatal(err)
	}
	scope := reputation.Scope{Operation: "validate_v3", Kind: "arithmetic"}
	rel, err := book.Reliabilities(context.Background(), scope, []int64{1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("session 2: %.2f\n", rel.Of(2))
	fmt.Println("loads:", store.Loads())
	// Output:
	// session 2: 0.80
	// loads: 1
}
