package receipt_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

// TestParseKeyFile_pemOneBlock: a PEM key file holds one PRIVATE KEY
// block; a second block, or text after the first, is refused rather
// than dropped, so that a file holding two keys never signs with the
// first alone while its holder believes both are in use.
func TestParseKeyFile_pemOneBlock(t *testing.T) {
	block := func(seed byte) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	one := block(1)
	if _, err := receipt.ParseKeyFile(one); err != nil {
		t.Fatalf("one PEM block: %v", err)
	}
	if _, err := receipt.ParseKeyFile(append(append([]byte{}, one...), "\n\n"...)); err != nil {
		t.Errorf("one PEM block and blank lines: %v", err)
	}
	for name, text := range map[string][]byte{
		"two blocks":     append(append([]byte{}, one...), block(2)...),
		"text after one": append(append([]byte{}, one...), "key 2 below\n"...),
	} {
		if _, err := receipt.ParseKeyFile(text); err == nil || !strings.Contains(err.Error(), "more than one PEM block") {
			t.Errorf("%s: ParseKeyFile = %v, want an error saying it holds more than one PEM block", name, err)
		}
	}
}
