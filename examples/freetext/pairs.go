package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/vouchkit/vouch/router/embedkey"
)

// pair is one pair of answers of a pairs file (router/embedkey's
// testdata/pairs.json): a paraphrase (Same) or an answer that changes one
// fact of the other.
type pair struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Same bool   `json:"same"`
	Kind string `json:"kind"`
}

// parsePairs reads a pairs file strictly: every pair names both answers
// (a misnamed member would leave them empty, and equal), and the file
// holds paraphrases and changed facts both, without which checkPairs has
// nothing to find at fault.
func parsePairs(data []byte) ([]pair, error) {
	var pairs []pair
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pairs); err != nil {
		return nil, err
	}
	same, changed := 0, 0
	for i, p := range pairs {
		if p.A == "" || p.B == "" {
			return nil, fmt.Errorf("pair %d: a and b must both be non-empty answers", i)
		}
		if p.Same {
			same++
		} else {
			changed++
		}
	}
	if same == 0 || changed == 0 {
		return nil, fmt.Errorf("want paraphrases (same: true) and changed facts (same: false) both; the file holds %d and %d", same, changed)
	}
	return pairs, nil
}

// pairCounts is how many pairs of each sort agreed at one setting.
type pairCounts struct {
	guard                 bool
	threshold             float64
	paraphrases, agreeing int // paraphrases that agreed
	changed, passed       int // changed facts that agreed
}

// measurePairs groups every pair of file with embedkey on the endpoint at
// baseURL (a real embedding model), with and without the guard, at each
// threshold, and writes how many paraphrases and changed facts agreed.
// Then it checks the figures (checkPairs): an error once the table is
// written means the guard or the model failed at its job.
func measurePairs(ctx context.Context, w io.Writer, file, baseURL, model string, thresholds []float64) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	pairs, err := parsePairs(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(w, "| grouping | threshold | paraphrases agreeing | changed facts agreeing |\n|---|---|---|---|\n")
	var all []pairCounts
	for _, guard := range []bool{true, false} {
		for _, th := range thresholds {
			g, err := embedkey.New(embedkey.Config{BaseURL: baseURL, Model: model, Threshold: th, DisableGuard: !guard})
			if err != nil {
				return err
			}
			c := pairCounts{guard: guard, threshold: th}
			for _, p := range pairs {
				a, _ := json.Marshal(p.A)
				b, _ := json.Marshal(p.B)
				grouping, err := g.Group(ctx, []json.RawMessage{a, b})
				if err != nil {
					return err
				}
				agree := grouping.Groups[0] == grouping.Groups[1]
				if p.Same {
					c.paraphrases++
					c.agreeing += btoi(agree)
				} else {
					c.changed++
					c.passed += btoi(agree)
				}
			}
			name := "similarity alone"
			if guard {
				name = "guard and similarity"
			}
			if guard && th == embedkey.DefaultThreshold {
				name += " (default)"
			}
			fmt.Fprintf(w, "| %s | %g | %d of %d | %d of %d |\n", name, th, c.agreeing, c.paraphrases, c.passed, c.changed)
			all = append(all, c)
		}
	}
	return checkPairs(all)
}

// checkPairs returns an error when the figures show a grouping at fault:
// with the guard, a changed fact that agreed at any threshold (the guard
// reads the words, whatever the model); without it, paraphrases that
// agreed no more often than changed facts at some threshold, which a
// model whose embeddings carry meaning does not do.
func checkPairs(counts []pairCounts) error {
	for _, c := range counts {
		switch {
		case c.guard && c.passed > 0:
			return fmt.Errorf("with the guard, %d of %d changed facts agreed at threshold %g", c.passed, c.changed, c.threshold)
		case !c.guard && c.paraphrases > 0 && c.changed > 0 &&
			float64(c.agreeing)/float64(c.paraphrases) <= float64(c.passed)/float64(c.changed):
			return fmt.Errorf("the model does not tell paraphrases from changed facts: at threshold %g, %d of %d paraphrases agreed and %d of %d changed facts",
				c.threshold, c.agreeing, c.paraphrases, c.passed, c.changed)
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
