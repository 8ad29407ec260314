package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// A signing key file is a receipt.KeyFile: JSON naming the current key
// (with its private half) and the retired ones (public halves) with the
// windows in which they signed; see the receipt package's KeyFile for the
// format. The file may also hold a single key, valid at every time, as 64
// hex digits of the Ed25519 seed or a PEM "PRIVATE KEY" block (PKCS #8,
// as written by openssl genpkey -algorithm ed25519).
//
// A file that does not exist is created with a new key, mode 0600, so
// that the first run makes the key and later runs (and other servers
// given the same file) sign with it. -rotate-signing-key retires the
// current key and adds a new one before the server starts; stop the
// other servers on the file first, since they keep signing with the key
// they read. -trusted-keys FILE writes the public form of the key file:
// what verifiers (examples/verify-receipt -keys FILE) trust.

// signingFlags registers the flags of the receipts' signing key.
func signingFlags(fs *flag.FlagSet, cfg *config) {
	fs.StringVar(&cfg.signingKey, "signing-key", "",
		"`FILE` holding the receipts' signing keys (the JSON key file of receipt.KeyFile, or one Ed25519 key as 64 hex digits of the seed or a PEM PRIVATE KEY); created with a new key, mode 0600, if missing. Default: a new key for this run only")
	fs.BoolVar(&cfg.rotateSigningKey, "rotate-signing-key", false,
		"retire the current key of -signing-key FILE (kept as a public key with its validity window) and sign with a new one from now on")
	fs.StringVar(&cfg.trustedKeys, "trusted-keys", "",
		"write the public keys of -signing-key, with their validity windows, to `FILE` for verifiers")
}

// signingKey is the receipts' signer, the keys that verify what this
// server signed, and where they came from.
type signingKey struct {
	signer  *receipt.Ed25519Signer
	file    *receipt.KeyFile
	trusted []receipt.PublicKey
	origin  string // for the banner
}

// setUpSigningKey loads (or creates) the key of cfg.signingKey, rotates
// it when asked, and writes the trusted keys when asked.
func setUpSigningKey(cfg config) (*signingKey, error) {
	if err := checkTrustedKeysPath(cfg); err != nil {
		return nil, err
	}
	if cfg.rotateSigningKey {
		if cfg.signingKey == "" {
			return nil, errors.New("-rotate-signing-key needs -signing-key FILE")
		}
		if err := rotateSigningKey(cfg.signingKey, time.Now()); err != nil {
			return nil, err
		}
	}
	k, err := loadSigningKey(cfg.signingKey)
	if err != nil {
		return nil, err
	}
	if cfg.trustedKeys != "" {
		// The key file may have been created just now: check again.
		if err := checkTrustedKeysPath(cfg); err != nil {
			return nil, err
		}
		if err := os.WriteFile(cfg.trustedKeys, k.file.Public().Marshal(), 0o644); err != nil {
			return nil, fmt.Errorf("-trusted-keys: %w", err)
		}
	}
	return k, nil
}

// checkTrustedKeysPath refuses a -trusted-keys FILE that is the file of
// -signing-key: writing the public keys there would replace the private
// key. Paths are compared cleaned and absolute, and with os.SameFile when
// both files exist (a symbolic or hard link to the key file).
func checkTrustedKeysPath(cfg config) error {
	if cfg.trustedKeys == "" || cfg.signingKey == "" {
		return nil
	}
	same := filepath.Clean(cfg.trustedKeys) == filepath.Clean(cfg.signingKey)
	if a, err := filepath.Abs(cfg.trustedKeys); err == nil {
		if b, err := filepath.Abs(cfg.signingKey); err == nil && a == b {
			same = true
		}
	}
	if fa, err := os.Stat(cfg.trustedKeys); err == nil {
		if fb, err := os.Stat(cfg.signingKey); err == nil && os.SameFile(fa, fb) {
			same = true
		}
	}
	if same {
		return fmt.Errorf("-trusted-keys %s and -signing-key %s name the same file: the public keys would replace the private key", cfg.trustedKeys, cfg.signingKey)
	}
	return nil
}

// loadSigningKey returns the signer of path, creating the file with a
// new key if it is missing; an empty path gives a key for this run only.
func loadSigningKey(path string) (*signingKey, error) {
	if path == "" {
		f, err := receipt.NewKeyFile(time.Now(), nil)
		if err != nil {
			return nil, err
		}
		return newSigningKey(f, "new for this run; receipts outlive it only with -signing-key FILE")
	}
	origin := "from " + path
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		var created bool
		if data, created, err = createKeyFile(path); created {
			origin = "created " + path
		}
	}
	if err != nil {
		return nil, fmt.Errorf("-signing-key %s: %w", path, err)
	}
	f, err := receipt.ParseKeyFile(data)
	if err != nil {
		return nil, fmt.Errorf("-signing-key %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		// Whoever reads the file can sign receipts as this server.
		origin += fmt.Sprintf("; warning: its mode %o lets others read the private key: chmod 600 %s", fi.Mode().Perm(), path)
	}
	return newSigningKey(f, origin)
}

func newSigningKey(f *receipt.KeyFile, origin string) (*signingKey, error) {
	signer, err := f.Signer()
	if err != nil {
		return nil, err
	}
	trusted, err := f.Trusted()
	if err != nil {
		return nil, err
	}
	return &signingKey{signer: signer, file: f, trusted: trusted, origin: origin}, nil
}

// rotateSigningKey retires the current key of the file at path at now and
// adds a new one, replacing the file whole.
func rotateSigningKey(path string, now time.Time) error {
	f, err := receipt.ReadKeyFile(path)
	if err != nil {
		return fmt.Errorf("-rotate-signing-key: %w", err)
	}
	if err := f.Rotate(now, nil); err != nil {
		return fmt.Errorf("-rotate-signing-key: %w", err)
	}
	tmp, err := writeTemp(path, f.Marshal())
	if err != nil {
		return fmt.Errorf("-rotate-signing-key: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("-rotate-signing-key: %w", err)
	}
	return nil
}

// writeTemp writes data to a new file, mode 0600, beside path, synced, and
// returns its name.
func writeTemp(path string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".signing-key-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// createKeyFile writes a new seed to path, mode 0600, and returns the
// file's content. The file appears whole or not at all: it is written
// beside path and linked into place, which fails if path exists by then;
// in that case (another server created it first) the existing file is
// read instead, and created is false.
func createKeyFile(path string) (data []byte, created bool, err error) {
	f, err := receipt.NewKeyFile(time.Now(), nil)
	if err != nil {
		return nil, false, err
	}
	data = f.Marshal()
	tmp, err := writeTemp(path, data)
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(tmp)
	// CreateTemp makes the file 0600.
	switch err := os.Link(tmp, path); {
	case errors.Is(err, fs.ErrExist):
		data, err = os.ReadFile(path)
		return data, false, err
	case err != nil:
		return nil, false, err
	}
	return data, true, nil
}
