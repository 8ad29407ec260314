package embedkey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
)

// Three answers to "who won the 1903 physics Nobel?": two say the same in
// other words, one changes the year. The stand-in endpoint embeds each
// answer as the facts it states (laureate, year, prize) plus a little of
// its wording, as a model that separates facts would.
func ExampleGrouper_Group() {
	vectors := map[string][]float64{ // laureate, 1903, 1911, physics, wording
		"Marie Curie won the 1903 Nobel Prize in Physics.":           {1, 1, 0, 1, 0.1},
		"In 1903 Marie Curie shared the physics Nobel with Pierre.":  {1, 1, 0, 1, 0.3},
		"Marie Curie won the Nobel Prize in Physics in 1911, alone.": {1, 0, 1, 1, 0.2},
	}
	srv := embedkeytest.NewServer(func(text string) []float64 { return vectors[text] })
	defer srv.Close()

	g, err := embedkey.New(embedkey.Config{BaseURL: srv.URL + "/v1", Model: "embed-1"})
	if err != nil {
		log.Fatal(err)
	}
	var outputs []json.RawMessage
	for _, s := range []string{
		"Marie Curie won the 1903 Nobel Prize in Physics.",
		"In 1903 Marie Curie shared the physics Nobel with Pierre.",
		"Marie Curie won the Nobel Prize in Physics in 1911, alone.",
	} {
		raw, _ := json.Marshal(s)
		outputs = append(outputs, raw)
	}
	grouping, err := g.Group(context.Background(), outputs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("threshold", grouping.Threshold, "groups", grouping.Groups)
	for _, p := range grouping.Pairs {
		fmt.Printf("answers %d and %d: %.3f\n", p.A, p.B, p.Value)
	}
	// Output:
	// threshold 0.97 groups [0 0 1]
	// answers 0 and 1: 0.994
	// answers 0 and 2: 0.668
	// answers 1 and 2: 0.672
}
