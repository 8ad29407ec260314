package embedkey

import (
	"encoding/json"
	"os"
	"testing"
)

// pair is one pair of answers of testdata/pairs.json: a paraphrase (Same)
// or an answer that changes one fact of the other (a number, a date, a
// name, a negation, two roles swapped, or another word).
type pair struct {
	A, B string
	Same bool
	Kind string
}

func readPairs(t *testing.T) []pair {
	t.Helper()
	data, err := os.ReadFile("testdata/pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ps []pair
	if err := json.Unmarshal(data, &ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestSameFacts_pairs holds the guard to the pairs: no answer that
// changes a fact passes it, and some paraphrases do.
func TestSameFacts_pairs(t *testing.T) {
	paraphrases := 0
	for _, p := range readPairs(t) {
		same := sameFacts(factsOf(p.A), factsOf(p.B))
		if same != sameFacts(factsOf(p.B), factsOf(p.A)) {
			t.Errorf("%q / %q: the guard answers differently both ways", p.A, p.B)
		}
		switch {
		case !p.Same && same:
			t.Errorf("%q / %q (%s): the guard lets a changed fact pass", p.A, p.B, p.Kind)
		case p.Same && same:
			paraphrases++
		}
	}
	if paraphrases < 10 {
		t.Errorf("the guard passes %d paraphrases, want at least 10: it would leave the embeddings nothing to decide", paraphrases)
	}
	t.Logf("the guard passes %d paraphrases", paraphrases)
}

func TestSameFacts(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"The store closes at 6 pm.", "The store closes at 6 pm.", true},
		{"The patient takes two tablets.", "The patient takes 2 tablets.", true},
		{"The invoice totals 1,250 euros.", "The invoice totals 1250 euros.", true},
		{"The invoice totals 1,250 euros.", "The invoice totals 1,520 euros.", false},
		{"It is open.", "It isn't open.", false},
		{"Yes, it is allowed.", "No, it is not allowed.", false},
		{"Tokyo is larger than Delhi.", "Delhi is larger than Tokyo.", false},
		{"Paris is the capital.", "Lyon is the capital.", false},
		{"The buyer pays the seller.", "The seller pays the buyer.", false},
		{"The limit is 5 per minute.", "The limit is 5 per hour.", false},
		{"The office is on the third floor.", "The office is on the 3 floor.", true},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := sameFacts(factsOf(tt.a), factsOf(tt.b)); got != tt.want {
			t.Errorf("sameFacts(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func FuzzFactsOf(f *testing.F) {
	for _, s := range []string{"The invoice totals 1,250 euros.", "Isn't it 3.5?", "’s '", "1,", ",1", "É. À"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !sameFacts(factsOf(s), factsOf(s)) {
			t.Fatalf("%q does not state the same facts as itself", s)
		}
	})
}

// TestGuard_minusSign: a number with a minus sign (ASCII or U+2212) is
// another number than the same digits without one, in text or JSON, so
// answers that differ only by it never state the same facts.
func TestGuard_minusSign(t *testing.T) {
	for _, p := range [][2]string{
		{"The temperature in Oslo is -5 degrees.", "The temperature in Oslo is 5 degrees."},
		{"The balance is -1,250 euros.", "The balance is 1,250 euros."},
		{"The temperature in Oslo is −5 degrees.", "The temperature in Oslo is 5 degrees."},
		{`{"balance":-250}`, `{"balance":250}`},
	} {
		if sameFacts(factsOf(p[0]), factsOf(p[1])) {
			t.Errorf("%q and %q state the same facts; numbers %v and %v", p[0], p[1], factsOf(p[0]).numbers, factsOf(p[1]).numbers)
		}
	}
	if a, b := "A range of 5-7 days.", "A range of 5-7 days."; !sameFacts(factsOf(a), factsOf(b)) {
		t.Errorf("%q and itself state other facts", a)
	}
}
