package receipt_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

func TestParseKeyFile_forms(t *testing.T) {
	seed := bytes.Repeat([]byte{3}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	want := receipt.Ed25519Key(priv.Public().(ed25519.PublicKey)).Issuer()
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	kf, _ := receipt.KeyFileFromPrivateKey(priv)
	for name, text := range map[string]string{
		"hex seed": "\n " + hex.EncodeToString(seed) + "\n",
		"PEM":      string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"JSON":     string(kf.Marshal()),
	} {
		f, err := receipt.ParseKeyFile([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := f.Signer()
		if err != nil || s.Issuer() != want {
			t.Errorf("%s: signer %v (%v), want %s", name, s, err, want)
		}
	}
}

func TestParseKeyFile_invalid(t *testing.T) {
	f, _ := receipt.NewKeyFile(t0(), bytes.NewReader(bytes.Repeat([]byte{1}, 64)))
	if err := f.Rotate(t0().Add(time.Hour), bytes.NewReader(bytes.Repeat([]byte{2}, 64))); err != nil {
		t.Fatal(err)
	}
	good := string(f.Marshal())
	other, _ := receipt.NewKeyFile(t0(), bytes.NewReader(bytes.Repeat([]byte{9}, 64)))
	for name, tc := range map[string]struct{ text, field string }{
		"empty":               {``, "want the JSON key file format"},
		"no keys":             {`{"keys":[]}`, "keys is empty"},
		"unknown member":      {`{"keys":[],"extra":1}`, "extra"},
		"two values":          {`{"keys":[]} {}`, "more than one"},
		"stray brace":         {good + " }", "more than one"},
		"bad issuer":          {strings.Replace(good, `"ed25519:`, `"ed25519:x`, 1), "keys[0].issuer"},
		"retired, open":       {strings.Replace(good, `"not_after"`, `"not_afterx"`, 1), "not_afterx"},
		"private key retired": {strings.Replace(good, `"not_before"`, `"private_key":"`+other.Keys[0].PrivateKey+`","not_before"`, 1), "keys[0].private_key"},
		"wrong private key":   {strings.Replace(good, f.Keys[1].PrivateKey, other.Keys[0].PrivateKey, 1), "keys[1].private_key does not match"},
		"short private key":   {strings.Replace(good, f.Keys[1].PrivateKey, "abcd", 1), "keys[1].private_key must be 64 hex digits"},
		"repeated key":        {strings.Replace(good, f.Keys[1].Issuer, f.Keys[0].Issuer, 1), "keys[1].issuer repeats"},
		// encoding/json would keep the last of a repeated member, so
		// that a file merged by hand could drop keys without a word.
		"repeated keys member": {`{"keys":[],` + strings.TrimPrefix(good, "{"), `"keys"`},
		"repeated key member":  {strings.Replace(good, `"not_before"`, `"issuer":"`+other.Keys[0].Issuer+`","not_before"`, 1), `"issuer"`},
		"window reversed":      {strings.Replace(good, `"not_after": "2026-05-01T13:00:00Z"`, `"not_after": "2026-05-01T11:00:00Z"`, 1), "keys[0].not_after must be after"},
	} {
		_, err := receipt.ParseKeyFile([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: ParseKeyFile = %v, want an error naming %q", name, err, tc.field)
		}
	}
	if _, err := receipt.ParseKeyFile([]byte(good)); err != nil {
		t.Errorf("the unchanged file: %v", err)
	}
}

// TestKeyFile_rotation signs a receipt before and after a rotation: each
// verifies under the rotated file's trusted keys, and a receipt dated
// after the rotation but signed with the retired key does not.
func TestKeyFile_rotation(t *testing.T) {
	f, err := receipt.NewKeyFile(t0().Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	oldSigner, err := f.Signer()
	if err != nil {
		t.Fatal(err)
	}
	rotatedAt := t0().Add(time.Hour)
	if err := f.Rotate(rotatedAt, nil); err != nil {
		t.Fatal(err)
	}
	newSigner, err := f.Signer()
	if err != nil || newSigner.Issuer() == oldSigner.Issuer() {
		t.Fatalf("signer after rotation %v (%v), want a new key", newSigner, err)
	}
	// Round trip through the public form, as a verifier gets it.
	pub, err := receipt.ParseKeyFile(f.Public().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Signer(); err == nil {
		t.Error("the public form can sign")
	}
	trusted, err := pub.Trusted()
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, trusted, receipt.WithExpiredUnsafe())
	issueAt := func(s receipt.Signer, at time.Time) []byte {
		is := &receipt.Issuer{Signer: s, Store: &receipt.MemStore{}, Now: func() time.Time { return at }}
		return issue(t, is, fullParams()).JSON
	}
	for _, tc := range []struct {
		name   string
		signer receipt.Signer
		at     time.Time
		want   error
	}{
		{"old key in its window", oldSigner, t0(), nil},
		{"new key after rotation", newSigner, rotatedAt, nil},
		{"old key after rotation", oldSigner, rotatedAt, receipt.ErrKeyWindow},
		{"old key before its window", oldSigner, t0().Add(-2 * time.Hour), receipt.ErrKeyWindow},
		{"new key before rotation", newSigner, rotatedAt.Add(-time.Millisecond), receipt.ErrKeyWindow},
	} {
		res, err := v.Verify(issueAt(tc.signer, tc.at), receipt.Originals{}, tc.at)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
			continue
		}
		if c, _ := res.Check(receipt.CheckKeyWindow); tc.want != nil && c.Code != "key_window" {
			t.Errorf("%s: key_window check %+v, want code key_window", tc.name, c)
		}
	}
	if err := f.Rotate(rotatedAt, nil); err == nil {
		t.Error("a second rotation at the same instant succeeded")
	}
}

// TestKeyFile_rotationSubSecond rotates a key within a second, and
// within a millisecond, of receipts it signed: every receipt each key
// signed verifies under its window (the retired key's window used to end
// at the rotation's whole second), and the retired key signs nothing
// dated after the rotation's millisecond.
func TestKeyFile_rotationSubSecond(t *testing.T) {
	noon := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return noon.Add(time.Duration(n) * time.Millisecond) }
	for _, tc := range []struct {
		name                string
		rotate              time.Time
		oldSigned, newAfter []time.Time // signing instants of each key
		oldRefused          time.Time
	}{
		{"rotated at .700, signed at .400", ms(700), []time.Time{ms(400), ms(699)}, []time.Time{ms(700), ms(1500)}, ms(701)},
		{"rotated at .7005, signed at .7003", ms(700).Add(500 * time.Microsecond),
			[]time.Time{ms(700).Add(300 * time.Microsecond)}, []time.Time{ms(700).Add(800 * time.Microsecond)}, ms(701)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := receipt.NewKeyFile(noon.Add(-time.Hour), nil)
			if err != nil {
				t.Fatal(err)
			}
			oldSigner, _ := f.Signer()
			if err := f.Rotate(tc.rotate, nil); err != nil {
				t.Fatal(err)
			}
			newSigner, _ := f.Signer()
			v := trustedVerifier(t, f)
			check := func(s receipt.Signer, at time.Time, want error) {
				t.Helper()
				is := &receipt.Issuer{Signer: s, Store: &receipt.MemStore{}, Now: func() time.Time { return at }}
				_, err := v.Verify(issue(t, is, fullParams()).JSON, receipt.Originals{}, at)
				if !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Errorf("signed by %s at %s: Verify = %v, want %v", s.Issuer(), at.Format(time.RFC3339Nano), err, want)
				}
			}
			for _, at := range tc.oldSigned {
				check(oldSigner, at, nil)
			}
			for _, at := range tc.newAfter {
				check(newSigner, at, nil)
			}
			check(oldSigner, tc.oldRefused, receipt.ErrKeyWindow)
		})
	}
}

// TestKeyFile_rotationRealClock issues receipts on the real clock right
// before and after rotations done at the real clock's time: each
// verifies.
func TestKeyFile_rotationRealClock(t *testing.T) {
	f, err := receipt.NewKeyFile(time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var issued [][]byte
	for range 3 {
		s, err := f.Signer()
		if err != nil {
			t.Fatal(err)
		}
		is := &receipt.Issuer{Signer: s, Store: &receipt.MemStore{}}
		issued = append(issued, issue(t, is, fullParams()).JSON)
		if err := f.Rotate(time.Now(), nil); err != nil {
			t.Fatal(err)
		}
	}
	v := trustedVerifier(t, f)
	for i, data := range issued {
		if _, err := v.Verify(data, receipt.Originals{}, time.Now()); err != nil {
			t.Errorf("receipt %d, signed right before a rotation: %v", i, err)
		}
	}
}

// trustedVerifier returns a verifier of f's keys, read back from the
// public file as a verifier gets it.
func trustedVerifier(t *testing.T, f *receipt.KeyFile) *receipt.Verifier {
	t.Helper()
	pub, err := receipt.ParseKeyFile(f.Public().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := pub.Trusted()
	if err != nil {
		t.Fatal(err)
	}
	return newVerifier(t, trusted)
}

func TestReadKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	f, _ := receipt.NewKeyFile(t0(), nil)
	if err := os.WriteFile(path, f.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := receipt.ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.ReadKeyFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadKeyFile(bad) = %v, want an error naming the file", err)
	}
}

func TestVerify_oneLine(t *testing.T) {
	s := newSigner(t, 1)
	is := &receipt.Issuer{Signer: s, Store: &receipt.MemStore{}}
	p := fullParams()
	p.Request = receipt.Inline()
	issued, err := is.Issue(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := receipt.Verify(issued.JSON, s.Public()); err != nil || !res.Valid() {
		t.Errorf("Verify = %v, %+v", err, res)
	}
	if _, err := receipt.Verify(issued.JSON, newSigner(t, 2).Public()); !errors.Is(err, receipt.ErrUnknownKey) {
		t.Errorf("Verify(other key) = %v, want ErrUnknownKey", err)
	}
	if _, err := receipt.Verify(issued.JSON); err == nil {
		t.Error("Verify with no key succeeded")
	}
}

func FuzzParseKeyFile(f *testing.F) {
	kf, _ := receipt.NewKeyFile(t0(), bytes.NewReader(bytes.Repeat([]byte{1}, 64)))
	_ = kf.Rotate(t0().Add(time.Hour), bytes.NewReader(bytes.Repeat([]byte{2}, 64)))
	f.Add(string(kf.Marshal()))
	f.Add(string(kf.Public().Marshal()))
	f.Add(hex.EncodeToString(bytes.Repeat([]byte{1}, 32)))
	f.Add(`{"keys":[{"issuer":"ed25519:","not_before":"2026-01-01T00:00:00Z"}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		kf, err := receipt.ParseKeyFile([]byte(text))
		if err != nil {
			return
		}
		trusted, err := kf.Trusted()
		if err != nil || len(trusted) != len(kf.Keys) {
			t.Fatalf("a parsed file gives %d trusted keys (%v), want %d", len(trusted), err, len(kf.Keys))
		}
		if _, err := receipt.NewVerifier(trusted); err != nil {
			t.Fatalf("NewVerifier of a parsed file: %v", err)
		}
		again, err := receipt.ParseKeyFile(kf.Marshal())
		if err != nil {
			t.Fatalf("a parsed file does not parse again after Marshal: %v", err)
		}
		if s1, err1 := kf.Signer(); err1 == nil {
			s2, err2 := again.Signer()
			if err2 != nil || s1.Issuer() != s2.Issuer() {
				t.Fatalf("signer changed across Marshal: %v %v", s2, err2)
			}
		}
	})
}

// TestNewVerifier_trustedKeyPointer: a pointer to a TrustedKey bounds its
// key's receipts by the window as the value does, rather than passing as
// a key valid at every time; a nil one is refused.
func TestNewVerifier_trustedKeyPointer(t *testing.T) {
	s := newSigner(t, 1)
	window := receipt.TrustedKey{PublicKey: s.Public(), NotBefore: t0(), NotAfter: t0().Add(time.Hour)}
	is := &receipt.Issuer{Signer: s, Store: &receipt.MemStore{}, Now: func() time.Time { return t0().Add(2 * time.Hour) }}
	late := issue(t, is, fullParams()).JSON // signed after the window
	for name, key := range map[string]receipt.PublicKey{"value": window, "pointer": &window} {
		v := newVerifier(t, []receipt.PublicKey{key}, receipt.WithExpiredUnsafe())
		if _, err := v.Verify(late, receipt.Originals{}, t0().Add(2*time.Hour)); !errors.Is(err, receipt.ErrKeyWindow) {
			t.Errorf("a TrustedKey as a %s: Verify of a receipt signed after its window = %v, want ErrKeyWindow", name, err)
		}
	}
	if _, err := receipt.NewVerifier([]receipt.PublicKey{(*receipt.TrustedKey)(nil)}); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("NewVerifier(nil *TrustedKey) = %v, want an error saying the key is nil", err)
	}
}

// TestNewVerifier_nestedTrustedKey: a TrustedKey whose key is itself a
// TrustedKey (or a pointer to one) is refused, naming the key, rather
// than trusted with the outer window alone, which left the inner key
// valid at every time.
func TestNewVerifier_nestedTrustedKey(t *testing.T) {
	s := newSigner(t, 1)
	inner := receipt.TrustedKey{PublicKey: s.Public(), NotBefore: t0(), NotAfter: t0().Add(time.Hour)}
	for name, key := range map[string]receipt.PublicKey{
		"value in value":     receipt.TrustedKey{PublicKey: inner},
		"pointer in value":   receipt.TrustedKey{PublicKey: &inner},
		"value in pointer":   &receipt.TrustedKey{PublicKey: inner},
		"pointer in pointer": &receipt.TrustedKey{PublicKey: &inner, NotBefore: t0()},
	} {
		_, err := receipt.NewVerifier([]receipt.PublicKey{key})
		if err == nil || !strings.Contains(err.Error(), s.Issuer()) || !strings.Contains(err.Error(), "TrustedKey") {
			t.Errorf("%s: NewVerifier = %v, want an error naming %s and the nesting", name, err, s.Issuer())
		}
	}
	for name, key := range map[string]receipt.PublicKey{
		"nil pointer":  receipt.TrustedKey{PublicKey: (*receipt.TrustedKey)(nil)},
		"no inner key": &receipt.TrustedKey{PublicKey: receipt.TrustedKey{}},
	} {
		if _, err := receipt.NewVerifier([]receipt.PublicKey{key}); err == nil {
			t.Errorf("%s: NewVerifier accepted it", name)
		}
	}
}
