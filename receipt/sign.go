package receipt

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"filippo.io/edwards25519"
)

// SchemeEd25519 names the package's signature scheme: pure Ed25519
// (RFC 8032, no prehash) over the RFC 8785 canonical JSON of the whole
// receipt with signing.signature set to the empty string, the signature
// written in unpadded base64url (RFC 4648, section 5). signing.issuer,
// signing.signature_scheme and signing.chain_anchor are part of the signed
// bytes, so neither the key name nor the scheme can be swapped.
const SchemeEd25519 = "ed25519-jcs"

// Ed25519IssuerPrefix starts the issuer of an Ed25519 key:
// "ed25519:" and the 32-byte public key in unpadded base64url.
const Ed25519IssuerPrefix = "ed25519:"

// Signer signs receipts. An implementation may hold its key in memory or
// call a key service; [Ed25519Signer] is the built-in one.
//
// Issuer and Scheme are written into signing.issuer and
// signing.signature_scheme before Sign is called, so they are covered by
// the signature; they must not change over the Signer's life. Sign
// receives the canonical bytes described at [SchemeEd25519] and returns
// the raw signature, which the package encodes in base64url. Sign must
// not keep or modify message. Implementations must be safe for concurrent
// use; cancelling ctx should stop a remote signing call.
type Signer interface {
	Issuer() string
	Scheme() string
	Sign(ctx context.Context, message []byte) ([]byte, error)
}

// PublicKey checks the signatures of one issuer. A [Verifier] holds a set
// of them, one per issuer, so keys can rotate: trust the new key and keep
// the old one for as long as its receipts live. [Ed25519Key] is the
// built-in one. VerifySignature must be safe for concurrent use and must
// not keep message or sig.
type PublicKey interface {
	Issuer() string
	Scheme() string
	VerifySignature(message, sig []byte) bool
}

// Ed25519Signer signs with an Ed25519 private key under [SchemeEd25519].
// It is safe for concurrent use.
type Ed25519Signer struct {
	priv ed25519.PrivateKey
	pub  Ed25519Key
}

// NewEd25519Signer returns a signer for priv, which must be a 64-byte
// Ed25519 private key (as from ed25519.GenerateKey or
// ed25519.NewKeyFromSeed).
func NewEd25519Signer(priv ed25519.PrivateKey) (*Ed25519Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("receipt: Ed25519 private key must be %d bytes, got %d", ed25519.PrivateKeySize, len(priv))
	}
	pub := Ed25519Key(priv.Public().(ed25519.PublicKey))
	return &Ed25519Signer{priv: priv, pub: pub}, nil
}

// Issuer returns "ed25519:" and the public key in unpadded base64url.
func (s *Ed25519Signer) Issuer() string { return s.pub.Issuer() }

// Scheme returns [SchemeEd25519].
func (s *Ed25519Signer) Scheme() string { return SchemeEd25519 }

// Sign signs message; it never blocks and ignores ctx.
func (s *Ed25519Signer) Sign(_ context.Context, message []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, message), nil
}

// Public returns the key that verifies this signer's receipts.
func (s *Ed25519Signer) Public() Ed25519Key { return s.pub }

// String returns "receipt.Ed25519Signer(<issuer>)"; it never shows the
// private key.
func (s *Ed25519Signer) String() string { return "receipt.Ed25519Signer(" + s.Issuer() + ")" }

// GoString is String, so that %#v does not print the private key either.
func (s *Ed25519Signer) GoString() string { return s.String() }

// Ed25519Key is an Ed25519 public key trusted to sign receipts under
// [SchemeEd25519]. [NewVerifier], [LogVerifierKey] and a [KeyFile]
// reject one that is not 32 bytes long, is not the canonical encoding of
// a point of the curve, or has small order (such as the identity point),
// which would verify signatures that no private key made.
type Ed25519Key ed25519.PublicKey

// Issuer returns "ed25519:" and the key in unpadded base64url: a
// self-describing key id, so that a receipt names its key and an offline
// verifier needs nothing else.
func (k Ed25519Key) Issuer() string {
	return Ed25519IssuerPrefix + base64.RawURLEncoding.EncodeToString(k)
}

// Scheme returns [SchemeEd25519].
func (k Ed25519Key) Scheme() string { return SchemeEd25519 }

// VerifySignature reports whether sig is k's Ed25519 signature of message.
// It reports false for a key of the wrong length.
func (k Ed25519Key) VerifySignature(message, sig []byte) bool {
	return len(k) == ed25519.PublicKeySize && ed25519.Verify(ed25519.PublicKey(k), message, sig)
}

// check reports a key that cannot be trusted: one of the wrong length,
// one that is no point of the curve or not its point's canonical
// encoding, and one of small order. A key of small order (such as the
// identity point) verifies signatures that no private key made, so that
// trusting it would accept forged receipts; no key made by
// ed25519.GenerateKey is one.
func (k Ed25519Key) check() error {
	if len(k) != ed25519.PublicKeySize {
		return fmt.Errorf("receipt: Ed25519 public key must be %d bytes, got %d", ed25519.PublicKeySize, len(k))
	}
	p, err := new(edwards25519.Point).SetBytes(k)
	switch {
	case err != nil:
		return fmt.Errorf("receipt: Ed25519 public key %s is not a point of the curve", k.Issuer())
	case !bytes.Equal(p.Bytes(), k):
		return fmt.Errorf("receipt: Ed25519 public key %s is not in canonical form", k.Issuer())
	case new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1:
		return fmt.Errorf("receipt: Ed25519 public key %s has small order: it verifies signatures made without a private key", k.Issuer())
	}
	return nil
}

// ParseEd25519Key reads an Ed25519 public key written as an issuer
// ("ed25519:<base64url>"), as bare base64url or standard base64 of the 32
// bytes, as 64 hex digits, or as a PEM "PUBLIC KEY" block (PKIX, as
// written by openssl). Surrounding white space is ignored.
func ParseEd25519Key(s string) (Ed25519Key, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-----BEGIN") {
		block, _ := pem.Decode([]byte(s))
		if block == nil || block.Type != "PUBLIC KEY" {
			return nil, errors.New(`receipt: PEM input holds no "PUBLIC KEY" block`)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("receipt: failed to parse PEM public key: %w", err)
		}
		k, ok := pub.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("receipt: PEM public key is %T, not Ed25519", pub)
		}
		return Ed25519Key(k), nil
	}
	s = strings.TrimPrefix(s, Ed25519IssuerPrefix)
	for _, dec := range []func(string) ([]byte, error){
		base64.RawURLEncoding.DecodeString,
		base64.StdEncoding.DecodeString,
		base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString,
		hex.DecodeString,
	} {
		if b, err := dec(s); err == nil && len(b) == ed25519.PublicKeySize {
			return Ed25519Key(b), nil
		}
	}
	return nil, fmt.Errorf("receipt: %q is not a 32-byte Ed25519 public key in base64, base64url, hex or PEM", truncate(s, 60))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
