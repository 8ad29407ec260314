package receipt_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/vouchkit/vouch/receipt"
)

// smallOrderKeys are encodings of points of small order, which verify a
// signature made without any private key: the identity, its
// non-canonical spelling (y = p + 1), the point of order 2, and points of
// order 4 and 8 (RFC 8032; the list libsodium refuses).
var smallOrderKeys = map[string]string{
	"identity":                "0100000000000000000000000000000000000000000000000000000000000000",
	"identity, non-canonical": "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"order 2":                 "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"order 4":                 "0000000000000000000000000000000000000000000000000000000000000000",
	"order 4, non-canonical":  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"order 8":                 "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"order 8, other":          "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	"order 8, sign bit set":   "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
}

func mustKey(t *testing.T, h string) receipt.Ed25519Key {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return receipt.Ed25519Key(b)
}

// TestNewVerifier_smallOrderKey: a public key of small order verifies
// signatures that no private key made (here a receipt forged for the
// identity key), so NewVerifier, a key file, LogVerifierKey and
// OpenCheckpoint refuse one, naming it.
func TestNewVerifier_smallOrderKey(t *testing.T) {
	for name, h := range smallOrderKeys {
		key := mustKey(t, h)
		if _, err := receipt.NewVerifier([]receipt.PublicKey{key}); err == nil || !strings.Contains(err.Error(), key.Issuer()) {
			t.Errorf("%s: NewVerifier = %v, want an error naming %s", name, err, key.Issuer())
		}
		tk := receipt.TrustedKey{PublicKey: key, NotBefore: t0()}
		if _, err := receipt.NewVerifier([]receipt.PublicKey{tk}); err == nil {
			t.Errorf("%s: NewVerifier(TrustedKey) accepted the key", name)
		}
		if _, err := receipt.LogVerifierKey("example.com/log", key); err == nil {
			t.Errorf("%s: LogVerifierKey accepted the key", name)
		}
		vkey, err := note.NewEd25519VerifierKey("example.com/log", ed25519.PublicKey(key))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := receipt.OpenCheckpoint([]byte("example.com/log\n1\n"+strings.Repeat("A", 43)+"=\n\n"), vkey); err == nil || !strings.Contains(err.Error(), key.Issuer()) {
			t.Errorf("%s: OpenCheckpoint = %v, want an error naming %s", name, err, key.Issuer())
		}
		file := `{"keys":[{"issuer":"` + key.Issuer() + `","not_before":"2026-01-01T00:00:00Z"}]}`
		if _, err := receipt.ParseKeyFile([]byte(file)); err == nil || !strings.Contains(err.Error(), "keys[0].issuer") {
			t.Errorf("%s: ParseKeyFile = %v, want an error naming keys[0].issuer", name, err)
		}
	}
	// What such a key lets through: a signature made with no private key.
	sig := make([]byte, ed25519.SignatureSize)
	sig[0] = 1 // R = the identity, S = 0
	if !ed25519.Verify(ed25519.PublicKey(mustKey(t, smallOrderKeys["identity"])), []byte("any receipt"), sig) {
		t.Error("the identity key refused the forged signature; the premise of this test is wrong")
	}
}
