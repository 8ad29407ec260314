package trust

import (
	"crypto/ed25519"
	"errors"

	"github.com/vouchkit/vouch/receipt"
)

// WithSigningKey makes the service issue receipts signed with priv, a
// 64-byte Ed25519 private key (as from ed25519.GenerateKey), and keep
// them in memory unless [WithReceiptStore] names a store. It is the short
// form of [WithReceipts] with a [receipt.Issuer] whose Signer is
// receipt.NewEd25519Signer(priv). Verify what it issues with
// receipt.Verify(data, receipt.Ed25519Key(priv.Public().(ed25519.PublicKey))).
func WithSigningKey(priv ed25519.PrivateKey) Option {
	return func(s *Service) error {
		signer, err := receipt.NewEd25519Signer(priv)
		if err != nil {
			return err
		}
		s.issuer = withSigner(s.issuer, signer)
		return nil
	}
}

// WithSigningKeyFile is [WithSigningKey] with the current key of the key
// file at path (see [receipt.KeyFile] for the format, and
// [receipt.ParseKeyFile] for the single-key forms it also reads). The
// file is read once, by New. Its Public form is what verifiers trust.
func WithSigningKeyFile(path string) Option {
	return func(s *Service) error {
		f, err := receipt.ReadKeyFile(path)
		if err != nil {
			return err
		}
		signer, err := f.Signer()
		if err != nil {
			return err
		}
		s.issuer = withSigner(s.issuer, signer)
		return nil
	}
}

// WithReceiptStore keeps the service's receipts in st (a
// boltstore.Store or pgstore.DB's receipt store for receipts that
// outlive the process) instead of in memory. Given without a signing key
// the receipts are unsigned.
func WithReceiptStore(st receipt.Store) Option {
	return func(s *Service) error {
		if st == nil {
			return errors.New("trust: WithReceiptStore needs a store")
		}
		is := receipt.Issuer{}
		if s.issuer != nil {
			is = *s.issuer
		}
		is.Store = st
		s.issuer = &is
		return nil
	}
}

// withSigner returns a copy of is (a new Issuer with a memory store if is
// is nil) that signs with signer. The caller's Issuer, from WithReceipts,
// is never changed.
func withSigner(is *receipt.Issuer, signer receipt.Signer) *receipt.Issuer {
	c := receipt.Issuer{Store: &receipt.MemStore{}}
	if is != nil {
		c = *is
	}
	c.Signer = signer
	return &c
}
