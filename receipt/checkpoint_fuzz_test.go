package receipt_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

// FuzzParseCheckpoint reads any text as a checkpoint body, as
// verify-receipt and a log's clients read what a log serves: a
// checkpoint it accepts has an origin of one line and a size of at least
// zero, its body is where the text begins (extension lines may follow),
// and the body reads back as the same checkpoint.
func FuzzParseCheckpoint(f *testing.F) {
	hash := "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	for _, s := range []string{
		"example.com/test-log\n2\n" + hash + "\n",
		"example.com/test-log\n2\n" + hash + "\nextension line\n",
		"example.com/test-log\n02\n" + hash + "\n",
		"example.com/test-log\n-1\n" + hash + "\n",
		"example.com/test-log\n2\n" + strings.TrimRight(hash, "=") + "\n",
		"\n0\n" + hash + "\n",
		"o\n9223372036854775808\n" + hash + "\n",
		"o\n1\nAAAA\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cp, err := receipt.ParseCheckpoint(text)
		if err != nil {
			return
		}
		body := cp.String()
		if cp.Origin == "" || strings.Contains(cp.Origin, "\n") || cp.Size < 0 || !strings.HasPrefix(text, body) {
			t.Fatalf("ParseCheckpoint(%q) = %+v, whose body %q does not begin the text", text, cp, body)
		}
		again, err := receipt.ParseCheckpoint(body)
		if err != nil || again != cp {
			t.Fatalf("the body %q of %q reads as %+v, %v", body, text, again, err)
		}
	})
}
