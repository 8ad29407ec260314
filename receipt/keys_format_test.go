package receipt_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/secrettest"
	"github.com/vouchkit/vouch/receipt"
)

// TestKeyFile_formatHidesPrivateKey checks that neither fmt nor log/slog
// shows the private half of a key file, of one of its keys, or of its
// signer.
func TestKeyFile_formatHidesPrivateKey(t *testing.T) {
	f, err := receipt.NewKeyFile(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Rotate(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), nil); err != nil {
		t.Fatal(err)
	}
	signer, err := f.Signer()
	if err != nil {
		t.Fatal(err)
	}
	cur := f.Keys[len(f.Keys)-1]
	seed, err := hex.DecodeString(cur.PrivateKey)
	if err != nil || len(seed) == 0 {
		t.Fatalf("the current key holds no private key: %q", cur.PrivateKey)
	}
	// The seed as each verb would print it: hex, and the decimal bytes of
	// %v.
	forms := []string{cur.PrivateKey, strings.Trim(fmt.Sprint(seed[:8]), "[]")}
	for name, v := range map[string]any{"*KeyFile": f, "KeyFile": *f, "FileKey": cur, "*FileKey": &cur, "*Ed25519Signer": signer} {
		secrettest.Hidden(t, v, forms...)
		if s := fmt.Sprint(v); !strings.Contains(s, cur.Issuer) {
			t.Errorf("fmt.Sprint(%s) = %s, want the issuer %s named", name, s, cur.Issuer)
		}
	}
}
