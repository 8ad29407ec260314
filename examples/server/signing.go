package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vouchkit/vouch/receipt"
)

// A signing key file holds one Ed25519 private key, in either form:
//
//   - 64 hex digits: the 32-byte seed (RFC 8032's private key), surrounded
//     by white space or not. This is what the server writes.
//   - a PEM "PRIVATE KEY" block (PKCS #8), as written by
//     openssl genpkey -algorithm ed25519.
//
// A file that does not exist is created with a new key, mode 0600, so
// that the first run makes the key and later runs (and other servers
// given the same file) sign with it.

// signingKey is the receipts' signer and where it came from.
type signingKey struct {
	signer *receipt.Ed25519Signer
	origin string // for the banner
}

// loadSigningKey returns the signer of path, creating the file with a
// new key if it is missing; an empty path gives a key for this run only.
func loadSigningKey(path string) (*signingKey, error) {
	if path == "" {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		s, err := receipt.NewEd25519Signer(priv)
		return &signingKey{signer: s, origin: "new for this run; receipts outlive it only with -signing-key FILE"}, err
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
		return nil, fmt.Errorf("-signing-key: %w", err)
	}
	priv, err := parsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("-signing-key %s: %w", path, err)
	}
	s, err := receipt.NewEd25519Signer(priv)
	return &signingKey{signer: s, origin: origin}, err
}

// parsePrivateKey reads the key file's content.
func parsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	if block, _ := pem.Decode(data); block != nil {
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("PEM block %q, want PRIVATE KEY", block.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a %T key, want Ed25519", k)
		}
		return priv, nil
	}
	seed, err := hex.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("want 64 hex digits (an Ed25519 seed) or a PEM PRIVATE KEY block")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// createKeyFile writes a new seed to path, mode 0600, and returns the
// file's content. The file appears whole or not at all: it is written
// beside path and linked into place, which fails if path exists by then;
// in that case (another server created it first) the existing file is
// read instead, and created is false.
func createKeyFile(path string) (data []byte, created bool, err error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, false, err
	}
	data = []byte(hex.EncodeToString(seed) + "\n")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".signing-key-*")
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, false, err
	}
	// CreateTemp makes the file 0600.
	switch err := os.Link(tmp.Name(), path); {
	case errors.Is(err, fs.ErrExist):
		data, err = os.ReadFile(path)
		return data, false, err
	case err != nil:
		return nil, false, err
	}
	return data, true, nil
}
