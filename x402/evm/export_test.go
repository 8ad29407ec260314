package evm

// ResignAuthCapture signs p's authorization (ERC-3009 or Permit2) again
// with key for the terms, as a payer that chose its fields would, so
// that a test can send one with fields SignAuthCapture never writes.
func ResignAuthCapture(key *PrivateKey, t AuthCaptureTerms, p *AuthCapturePayload) error {
	var digest [32]byte
	var err error
	if p.Permit2Authorization != nil {
		digest, err = permit2Digest(t.ChainID, *p.Permit2Authorization)
	} else {
		digest, err = receiveDigest(Domain{Name: t.Extra.Name, Version: t.Extra.Version, ChainID: t.ChainID, VerifyingContract: t.Token.String()}, *p.Authorization)
	}
	if err != nil {
		return err
	}
	p.Signature = hexSig(key.Sign(digest))
	return nil
}
