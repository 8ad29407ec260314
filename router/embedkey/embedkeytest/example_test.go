package embedkeytest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
)

// A test of code that groups answers serves vectors of its own choosing
// and reads the counters afterwards: three outputs of which two are the
// same answer cost one request embedding two texts.
func ExampleNewServer() {
	srv := embedkeytest.NewServer(func(text string) []float64 {
		if text == "Paris" {
			return []float64{1, 0}
		}
		return []float64{0, 1}
	})
	defer srv.Close()

	g, err := embedkey.New(embedkey.Config{BaseURL: srv.URL + "/v1", Model: "embed-1"})
	if err != nil {
		log.Fatal(err)
	}
	outputs := []json.RawMessage{[]byte(`"Paris"`), []byte(`"Lyon"`), []byte(`"Paris"`)}
	grouping, err := g.Group(context.Background(), outputs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("groups", grouping.Groups)
	fmt.Println("requests", srv.Requests.Load(), "inputs", srv.Inputs.Load())
	// Output:
	// groups [0 1 0]
	// requests 1 inputs 2
}
