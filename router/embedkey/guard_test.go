package embedkey

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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

// FuzzFactsOf checks properties of the guard that hold for any text s:
// white space may be folded without changing its facts; a number whose
// first digit is edited states other facts; and a negation word added
// to a text that has none states other facts.
func FuzzFactsOf(f *testing.F) {
	for _, s := range []string{"The invoice totals 1,250 euros.", "Isn't it 3.5?", "’s '", "1,", ",1", "É. À",
		"The store  closes\tat 6 pm.\n\nIt opens at 9.", "Tokyo is larger than Delhi."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := factsOf(s)
		if folded := foldSpace(s); !reflect.DeepEqual(factsOf(folded), fs) {
			t.Errorf("%q and %q, which differ only in white space, state other facts:\n%+v\n%+v", s, folded, fs, factsOf(folded))
		}
		if edited, ok := editNumber(s); ok && sameFacts(fs, factsOf(edited)) {
			t.Errorf("%q and %q, which differ in a number, state the same facts; numbers %v and %v",
				s, edited, fs.numbers, factsOf(edited).numbers)
		}
		if !fs.negative {
			for _, neg := range []string{"not", "never", "isn't", "nothing"} {
				negated := s + " " + neg
				if sameFacts(fs, factsOf(negated)) || sameFacts(factsOf(negated), fs) {
					t.Errorf("%q and %q state the same facts", s, negated)
				}
			}
		}
	})
}

// foldSpace replaces each run of white space in s with one space,
// keeping every other byte of s as it is.
func foldSpace(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
		} else {
			b.WriteString(s[i : i+n])
			space = false
		}
		i += n
	}
	return b.String()
}

// editNumber changes the first digit of the first number of s that
// starts with an ASCII digit at the start of s or after a space (so that
// the guard reads it as a number) to another digit. It reports false if
// s has no such number.
func editNumber(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' && (i == 0 || s[i-1] == ' ') {
			return s[:i] + string('0'+(c-'0'+1)%10) + s[i+1:], true
		}
	}
	return "", false
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
