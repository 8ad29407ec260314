package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

func TestLoadSigningKey_file(t *testing.T) {
	t.Parallel()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	tests := []struct {
		name, content string
		ok            bool
	}{
		{"hex seed", hex.EncodeToString(seed), true},
		{"hex seed with white space", "\n  " + hex.EncodeToString(seed) + "\n", true},
		{"PEM PKCS #8", string(pemKey), true},
		{"short hex", hex.EncodeToString(seed[:31]), false},
		{"not hex", strings.Repeat("zz", 32), false},
		{"other PEM block", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			k, err := loadSigningKey(path)
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Errorf("loadSigningKey = %v, want an error naming the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ed25519.PublicKey(k.signer.Public()), priv.Public().(ed25519.PublicKey); !got.Equal(want) || k.origin != "from "+path {
				t.Errorf("key %x from %q, want %x from the file", got, k.origin, want)
			}
		})
	}
}

func TestLoadSigningKey_created(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	// Servers started together on one missing file end up with one key.
	keys := make([]*signingKey, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := loadSigningKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	created := 0
	for _, k := range keys {
		if k.signer.Issuer() != keys[0].signer.Issuer() {
			t.Errorf("keys %s and %s from one file", k.signer.Issuer(), keys[0].signer.Issuer())
		}
		if k.origin == "created "+path {
			created++
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || created != 1 {
		t.Errorf("file %v (%v), created %d times; want mode 0600, created once", fi.Mode(), err, created)
	}
	again, err := loadSigningKey(path)
	if err != nil || again.signer.Issuer() != keys[0].signer.Issuer() {
		t.Errorf("reloaded key %v (%v), want %s", again, err, keys[0].signer.Issuer())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".signing-key-*")); len(left) != 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}

func TestLoadSigningKey_none(t *testing.T) {
	t.Parallel()
	a, err := loadSigningKey("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadSigningKey("")
	if err != nil || a.signer.Issuer() == b.signer.Issuer() {
		t.Errorf("two runs without a file share key %s (%v), want a new key each", a.signer.Issuer(), err)
	}
}

func TestSetUpSigningKey_rotate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	first, err := setUpSigningKey(config{signingKey: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setUpSigningKey(config{rotateSigningKey: true}); err == nil {
		t.Error("-rotate-signing-key without -signing-key succeeded")
	}
	// A rotation must come after the current key's not_before (to the
	// millisecond): date the key a second back rather than wait.
	f, err := receipt.ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Keys[0].NotBefore = f.Keys[0].NotBefore.Add(-time.Second)
	if err := os.WriteFile(path, f.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	trusted := filepath.Join(dir, "trusted.json")
	second, err := setUpSigningKey(config{signingKey: path, rotateSigningKey: true, trustedKeys: trusted})
	if err != nil {
		t.Fatal(err)
	}
	if second.signer.Issuer() == first.signer.Issuer() || len(second.trusted) != 2 {
		t.Fatalf("after rotation: signer %s with %d trusted keys, want a new signer and both keys", second.signer.Issuer(), len(second.trusted))
	}
	pub, err := receipt.ReadKeyFile(trusted)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Signer(); err == nil || len(pub.Keys) != 2 || pub.Keys[0].Issuer != first.signer.Issuer() {
		t.Errorf("-trusted-keys wrote %+v, want both public keys and no private one", pub)
	}
	again, err := setUpSigningKey(config{signingKey: path})
	if err != nil || again.signer.Issuer() != second.signer.Issuer() {
		t.Errorf("restart after rotation signs with %v (%v), want %s", again, err, second.signer.Issuer())
	}
}

func TestSetUpSigningKey_trustedKeysIsSigningKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	if _, err := setUpSigningKey(config{signingKey: path}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.json")
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	// A link to a key file not created yet becomes the key file.
	missing := filepath.Join(dir, "new.json")
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(missing, dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, signing, trusted string }{
		{"same path", path, path},
		{"with ./", path, dir + "/./keys.json"},
		{"symbolic link", path, link},
		{"hard link", hard, path},
		{"link to the key file to create", missing, dangling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := setUpSigningKey(config{signingKey: tt.signing, trustedKeys: tt.trusted})
			if err == nil || !strings.Contains(err.Error(), "-trusted-keys") || !strings.Contains(err.Error(), "-signing-key") {
				t.Errorf("setUpSigningKey = %v, want an error naming -trusted-keys and -signing-key", err)
			}
			f, err := receipt.ReadKeyFile(tt.signing)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Signer(); err != nil {
				t.Errorf("the key file lost its private key: %v", err)
			}
		})
	}
}

// TestLoadSigningKey_missingDirectory: a key file to create in a directory
// that does not exist is an error naming the file given, not only the
// temporary file the key is first written to.
func TestLoadSigningKey_missingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "signing.key")
	_, err := loadSigningKey(path)
	if err == nil || !strings.Contains(err.Error(), "-signing-key "+path+": ") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("loadSigningKey(%s) = %v, want an error naming the file and wrapping fs.ErrNotExist", path, err)
	}
}
