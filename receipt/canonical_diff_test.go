package receipt

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// The package canonicalizes with jsontext (see canonicalize); these tests
// hold it byte for byte to github.com/gowebpki/jcs, the implementation it
// replaced, on the golden files, the fuzz corpora and issued receipts.

// corpus returns the golden files, every string of the package's fuzz
// corpora, and a receipt of every include combination, signed.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	golden, _ := filepath.Glob("testdata/golden/*.json")
	for _, p := range golden {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if arg, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(arg, ")")); err == nil {
					out[p+":"+strconv.Itoa(i)] = []byte(s)
				}
			}
		}
	}
	is := &Issuer{Signer: goldenSigner(t), Store: &MemStore{}}
	for mask := range 32 {
		p := goldenParams()
		p.Request.Include = Include{
			ConsensusSnapshot: mask&1 != 0, PolicySnapshot: mask&2 != 0,
			InputHash: mask&4 != 0, OutputHash: mask&8 != 0, RouterTraceRefs: mask&16 != 0,
		}
		issued, err := is.Issue(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		out["issued:"+strconv.Itoa(mask)] = issued.JSON
	}
	return out
}

func TestCanonicalize_matchesJCS(t *testing.T) {
	inputs := corpus(t)
	// Numbers and strings RFC 8785 treats specially (its appendix B and
	// section 3.2.2.2), and member names sorted by UTF-16 code units.
	for i, s := range []string{
		`[0, -0, 1e21, 1e-7, 123456789012345680000, 9007199254740993, 0.000001, 1E+2, 5e-324, 1.7976931348623157e308, 333333333.33333329]`,
		`{"\u20ac":1,"\r":2,"1":3,"\ud83d\ude00":4,"\u0080":5,"\u00f6":6,"\ufb33":7}`,
		`"\u0000\u001f\"\\\/\u007f\u2028 \ud83d\ude00 é"`,
		`{"b":[{"d":1,"c":2}],"a":{"z":null,"y":true,"x":false}}`,
		`[1e400]`, `{"n":-1e309}`, `[1.8e308, 1.7976931348623157e308]`, `[1.7976931348623157e308, "1.7976931348623157e+308"]`, `[1e-400]`,
	} {
		inputs["special:"+strconv.Itoa(i)] = []byte(s)
	}
	compared := 0
	for name, data := range inputs {
		want, wantErr := jcs.Transform(data)
		got, gotErr := canonicalize(data)
		if wantErr != nil || gotErr != nil {
			if (wantErr == nil) != (gotErr == nil) && json.Valid(data) {
				t.Errorf("%s: jcs error %v, ours %v, on valid JSON %q", name, wantErr, gotErr, data)
			}
			continue
		}
		compared++
		if !bytes.Equal(got, want) {
			t.Errorf("%s: canonical form differs\n ours %s\n jcs  %s", name, got, want)
		}
	}
	if compared < 40 {
		t.Errorf("compared %d inputs, want the corpus (at least 40)", compared)
	}
}

// FuzzCanonicalize holds the two implementations to the same output
// wherever both accept the input.
func FuzzCanonicalize(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := jcs.Transform(data)
		got, gotErr := canonicalize(data)
		if wantErr != nil || gotErr != nil {
			if gotErr == nil && json.Valid(data) && utf8.Valid(data) {
				t.Fatalf("%q: jcs refuses it (%v), we accept it as %s", data, wantErr, got)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("canonical form of %q differs\n ours %s\n jcs  %s", data, got, want)
		}
		if again, err := canonicalize(got); err != nil || !bytes.Equal(again, got) {
			t.Fatalf("canonical form is not stable: %s -> %s (%v)", got, again, err)
		}
	})
}
