package trust_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
)

// TestWithSigningKey issues an inline receipt with the one-line options
// and checks it with receipt.Verify: from a key, from a key file, and
// into a named store.
func TestWithSigningKey(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	kf, err := receipt.KeyFileFromPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, kf.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	w := honest(0.95)
	for name, opts := range map[string][]trust.Option{
		"key":             {trust.WithSigningKey(priv)},
		"key file":        {trust.WithSigningKeyFile(path)},
		"store then key":  {trust.WithReceiptStore(store), trust.WithSigningKey(priv), trust.WithSignedReceipts()},
		"key then store":  {trust.WithSigningKeyFile(path), trust.WithReceiptStore(store), trust.WithSignedReceipts()},
		"issuer then key": {trust.WithReceipts(&receipt.Issuer{Store: store}), trust.WithSigningKey(priv)},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := trust.New(newEngine(t, w, w, w), opts...)
			if err != nil {
				t.Fatal(err)
			}
			req := request(trust.ModeValidation, trust.PolicySafe)
			req.Receipt = receipt.Inline()
			resp, err := s.Call(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub))
			if err != nil || !res.Valid() || res.Receipt.PolicySnapshot == nil || res.Receipt.TaskMeta.InputHash == "" {
				t.Fatalf("Verify = %v, %+v; want a valid receipt with every member", err, res)
			}
			if _, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(other)); !errors.Is(err, receipt.ErrUnknownKey) {
				t.Errorf("Verify with another key = %v, want ErrUnknownKey", err)
			}
			_, err = store.Get(context.Background(), res.ReceiptID, time.Now())
			want := strings.Contains(name, "store") || strings.Contains(name, "issuer")
			if inStore := err == nil; inStore != want {
				t.Errorf("receipt in the named store: %v, want it there only when a store was named", inStore)
			}
		})
	}
}

func TestWithSigningKey_bad(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "public.json")
	kf, _ := receipt.NewKeyFile(time.Now(), nil)
	if err := os.WriteFile(pub, kf.Public().Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, opt := range map[string]trust.Option{
		"short key":        trust.WithSigningKey(make([]byte, 10)),
		"missing file":     trust.WithSigningKeyFile(filepath.Join(dir, "none")),
		"public keys only": trust.WithSigningKeyFile(pub),
		"nil store":        trust.WithReceiptStore(nil),
	} {
		if _, err := trust.New(newEngine(t, honest(0.9)), opt); err == nil {
			t.Errorf("%s: New = nil error, want one", name)
		}
	}
}

// WithReceipts after an option that set the key or the store would drop
// what that option set (receipts issued unsigned, or kept elsewhere): New
// refuses the order.
func TestWithReceipts_afterAnotherReceiptOption(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	is := &receipt.Issuer{Store: &receipt.MemStore{}}
	w := honest(0.95)
	for name, first := range map[string]trust.Option{
		"key":      trust.WithSigningKey(priv),
		"store":    trust.WithReceiptStore(&receipt.MemStore{}),
		"receipts": trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}),
	} {
		if _, err := trust.New(newEngine(t, w, w, w), first, trust.WithReceipts(is)); err == nil || !strings.Contains(err.Error(), "WithReceipts") {
			t.Errorf("%s then WithReceipts: New = %v, want an error naming WithReceipts", name, err)
		}
	}
}
