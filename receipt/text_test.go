package receipt_test

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/vouchkit/vouch/receipt"
)

// TestVerify_numbers edits the numbers of a signed receipt: a number the
// canonical form writes as another value, and a fraction where the
// receipt holds an integer, fail the schema check with the rule number
// and the field's path; another spelling of the same value verifies.
func TestVerify_numbers(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	p := fullParams()
	p.Refs.Sessions = []int64{1 << 53, 202, 203}
	data := string(issue(t, is, p).JSON)
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	spaced := strings.ReplaceAll(data, ",", ", ") // not canonical, so every number is compared

	refused := []struct {
		name, text, field string
	}{
		{"session 2^53+1", strings.Replace(data, "9007199254740992", "9007199254740993", 1), "cortensor_refs.sessions[0]"},
		{"session 2^53+1, spaced", strings.Replace(spaced, "9007199254740992", "9007199254740993", 1), "cortensor_refs.sessions[0]"},
		{"session 2^53+1 spelled 9.007199254740993e15", strings.Replace(spaced, "9007199254740992", "9.007199254740993e15", 1), "cortensor_refs.sessions[0]"},
		{"confidence with more digits than a double", strings.Replace(data, `"confidence":0.9`, `"confidence":0.90000000000000001`, 1), "decision.confidence"},
		{"confidence below the smallest double", strings.Replace(data, `"confidence":0.9`, `"confidence":1e-400`, 1), "decision.confidence"},
		{"fraction in replicas", strings.Replace(data, `"replicas":3,"strategy":"majority"},"tier"`, `"replicas":2.5,"strategy":"majority"},"tier"`, 1), "policy_snapshot.consensus.replicas"},
		{"fraction in a session id", strings.Replace(data, "202", "202.5", 1), "cortensor_refs.sessions[1]"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if tc.text == data || tc.text == spaced {
				t.Fatal("the edit did not apply")
			}
			for _, door := range []string{"Verify", "Parse"} {
				var err error
				var fields []receipt.FieldError
				if door == "Verify" {
					var res *receipt.Result
					res, err = v.Verify([]byte(tc.text), receipt.Originals{}, t0())
					c, _ := res.Check(receipt.CheckSchema)
					fields = c.Errors
				} else {
					_, err = receipt.Parse([]byte(tc.text))
					var se *receipt.SchemaError
					if errors.As(err, &se) {
						fields = se.Fields
					}
				}
				if !errors.Is(err, receipt.ErrSchema) || len(fields) != 1 || fields[0].Rule != "number" || fields[0].Field != tc.field {
					t.Errorf("%s = %v, %+v; want ErrSchema, rule number on %s", door, err, fields, tc.field)
				}
			}
		})
	}

	accepted := map[string]string{
		"session 2^53 spelled 9.007199254740992e15": strings.Replace(spaced, "9007199254740992", "9.007199254740992e15", 1),
		"replicas spelled 30e-1":                    strings.Replace(spaced, `"replicas":3`, `"replicas":30e-1`, 1),
		"confidence spelled 0.900":                  strings.Replace(spaced, `"confidence":0.9`, `"confidence":0.900`, 1),
	}
	for name, text := range accepted {
		t.Run(name, func(t *testing.T) {
			if text == spaced {
				t.Fatal("the edit did not apply")
			}
			if res, err := v.Verify([]byte(text), receipt.Originals{}, t0()); err != nil || res.AsIssued {
				t.Errorf("Verify = %v, as issued %v; want valid, not as issued", err, res.AsIssued)
			}
		})
	}
}

// FuzzVerifyText verifies arbitrary texts against the key of one issued
// receipt: Verify never panics, and a text it finds valid holds exactly
// the numbers of the issued receipt (each number of the text, read as an
// exact decimal, is one of the issued text's), whatever its spelling.
func FuzzVerifyText(f *testing.F) {
	s := newSigner(f, 1)
	is, _ := newIssuer(f, s)
	p := fullParams()
	p.Refs.Sessions = []int64{1 << 53, 202, 203}
	issued := issue(f, is, p).JSON
	f.Add(issued)
	f.Add(bytes.ReplaceAll(issued, []byte(","), []byte(",\n ")))
	f.Add(bytes.Replace(issued, []byte("9007199254740992"), []byte("9007199254740993"), 1))
	f.Add(bytes.Replace(issued, []byte("0.9"), []byte("9e-1"), 1))
	f.Add([]byte(`"{\"receipt_id\":1}"`))
	v := newVerifier(f, []receipt.PublicKey{s.Public()})
	want := numbers(f, issued)
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := v.Verify(data, receipt.Originals{}, t0())
		if res == nil || len(res.Checks) != 6 || (err == nil) != res.Valid() {
			t.Fatalf("Verify = %+v, %v: want six checks and an error exactly when invalid", res, err)
		}
		if !res.Valid() || bytes.HasPrefix(bytes.TrimSpace(data), []byte(`"`)) {
			return
		}
		for _, n := range numbers(t, data) {
			found := false
			for _, w := range want {
				found = found || n.Cmp(w) == 0
			}
			if !found {
				t.Fatalf("valid text %s holds %s, a number the issued receipt does not", data, n.RatString())
			}
		}
	})
}

// numbers returns every number of the JSON text data as an exact rational.
func numbers(t testing.TB, data []byte) []*big.Rat {
	t.Helper()
	var out []*big.Rat
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("a valid text that does not read as JSON: %v", err)
		}
		if tok.Kind() == '0' {
			r, ok := new(big.Rat).SetString(tok.String())
			if !ok {
				t.Fatalf("number %s", tok.String())
			}
			out = append(out, r)
		}
	}
}
