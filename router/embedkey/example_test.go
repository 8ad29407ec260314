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
// other words, one changes the year. The stand-in endpoint embeds the
// changed year almost as close as the paraphrase, as real sentence
// embedding models do; the lexical guard keeps it apart.
func ExampleGrouper_Group() {
	vectors := map[string][]float64{ // laureate, prize, year, wording
		"Marie Curie won the 1903 Nobel Prize in Physics.":      {1, 1, 1, 0.1},
		"Marie Curie received the 1903 Nobel Prize in Physics.": {1, 1, 1, 0.3},
		"Marie Curie won the 1911 Nobel Prize in Physics.":      {1, 1, 0.9, 0.1},
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
		"Marie Curie received the 1903 Nobel Prize in Physics.",
		"Marie Curie won the 1911 Nobel Prize in Physics.",
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
	// threshold 0.9 groups [0 0 1]
	// answers 0 and 1: 0.994
	// answers 0 and 2: 0.000
	// answers 1 and 2: 0.000
}
