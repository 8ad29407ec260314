package receipt

import "time"

// Inline returns the receipt block of a trust request that asks for an
// inline receipt with every optional member: the input and output
// hashes, the policy and consensus snapshots and the router trace refs.
// The environment's default ttl and visibility apply.
func Inline() Request {
	return Request{Mode: DeliveryInline, Include: IncludeAll()}
}

// IncludeAll returns an Include that asks for every optional member.
func IncludeAll() Include {
	return Include{ConsensusSnapshot: true, PolicySnapshot: true, InputHash: true, OutputHash: true, RouterTraceRefs: true}
}

// Verify checks the receipt data, exactly as issued, against the trusted
// keys at the current time: its schema, its signature, that the key was
// valid when the receipt was issued, and its expiry. It is
// NewVerifier(keys) and Verify(data, Originals{}, time.Now()) in one call;
// use a [Verifier] to check hashes against the original input and output
// or to relax a check.
//
// With no key, or a key NewVerifier rejects, it returns a nil Result and
// NewVerifier's error, which wraps none of the sentinels of the checks;
// otherwise it returns what [Verifier.Verify] does, a Result never nil.
//
//	res, err := receipt.Verify(data, signer.Public())
func Verify(data []byte, keys ...PublicKey) (*Result, error) {
	v, err := NewVerifier(keys)
	if err != nil {
		return nil, err
	}
	return v.Verify(data, Originals{}, time.Time{})
}
