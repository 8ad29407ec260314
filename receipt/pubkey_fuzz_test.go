package receipt_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

// FuzzParseEd25519Key reads any text as a trusted public key, as
// verify-receipt's -key and a server's list of trusted keys are read: a
// key it accepts is 32 bytes, reads back from its issuer and from its
// PEM block as the same key, and, unless the text is PEM, is what the
// text writes in one of the encodings the documentation names (line
// breaks aside, which base64 decoding skips, and the bits of the last
// base64 character beyond the key, which it ignores).
func FuzzParseEd25519Key(f *testing.F) {
	pub := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		receipt.Ed25519Key(pub).Issuer(),
		base64.RawURLEncoding.EncodeToString(pub),
		" " + base64.StdEncoding.EncodeToString(pub) + "\n",
		hex.EncodeToString(pub),
		strings.ToUpper(hex.EncodeToString(pub)),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"ed25519:" + hex.EncodeToString(pub[:31]),
		"-----BEGIN",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := receipt.ParseEd25519Key(s)
		if err != nil {
			if k != nil {
				t.Fatalf("ParseEd25519Key(%q) = %x with error %v", s, k, err)
			}
			return
		}
		if len(k) != ed25519.PublicKeySize {
			t.Fatalf("ParseEd25519Key(%q) = %d bytes", s, len(k))
		}
		if again, err := receipt.ParseEd25519Key(k.Issuer()); err != nil || !slices.Equal(again, k) {
			t.Fatalf("key %x of %q: its issuer %q reads as %x, %v", k, s, k.Issuer(), again, err)
		}
		der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(k))
		if err != nil {
			t.Fatal(err)
		}
		if again, err := receipt.ParseEd25519Key(string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err != nil || !slices.Equal(again, k) {
			t.Fatalf("key %x of %q: its PEM block reads as %x, %v", k, s, again, err)
		}
		text := strings.TrimSpace(s)
		if strings.HasPrefix(text, "-----BEGIN") {
			return
		}
		text = strings.NewReplacer("\r", "", "\n", "").Replace(strings.TrimPrefix(text, receipt.Ed25519IssuerPrefix))
		switch len(text) {
		case 64:
			if !strings.EqualFold(text, hex.EncodeToString(k)) {
				t.Fatalf("ParseEd25519Key(%q) = %x, which the hex text does not write", s, k)
			}
		case 43, 44:
			// The 43rd character carries the last 4 bits of the key and 2
			// bits a lenient decoder ignores; the rest is the key.
			url, std := base64.RawURLEncoding.EncodeToString(k), base64.RawStdEncoding.EncodeToString(k)
			if text[:42] != url[:42] && text[:42] != std[:42] {
				t.Fatalf("ParseEd25519Key(%q) = %x, which the base64 text does not write", s, k)
			}
		default:
			t.Fatalf("ParseEd25519Key(%q) = %x from text of %d characters", s, k, len(text))
		}
	})
}
