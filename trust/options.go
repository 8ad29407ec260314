package trust

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// Option configures a [Service].
type Option func(*Service) error

// WithVariant makes every router call use variant v (normal, trial or
// x402). It matters only for a remote router.Client; the default is the
// client's own. Version 3 has no trial or x402 variant, so over a
// router.Client in those variants a call that needs version 3 (every tier
// but fast with [WithSingleSession]) fails with an error wrapping
// router.ErrNoVariant.
func WithVariant(v router.Variant) Option {
	return func(s *Service) error {
		switch v {
		case "", router.VariantNormal, router.VariantTrial, router.VariantX402:
			s.variant = v
			return nil
		}
		return fmt.Errorf("trust: unknown router variant %q", v)
	}
}

// WithSingleSession makes the fast tier call the version 2 endpoints on
// session id instead of version 3 with one replica; adaptive runs first on
// that session, through the version 2 endpoint too.
func WithSingleSession(id router.SessionID) Option {
	return func(s *Service) error {
		if id <= 0 {
			return fmt.Errorf("trust: single session id must be positive, got %d", id)
		}
		s.session = id
		return nil
	}
}

// WithSessionPool sets consensus.session_pool of the version 3 calls of
// fast, safe and oracle, and the sessions adaptive runs on. Without it the
// router draws from every session that serves the tier, and adaptive asks
// the router for its sessions (router.StatusReporter: in-process for the
// router.Engine, one GET /api/v1/status per call for a router.Client).
// Each id must be positive, as the router's session_pool requires; New
// refuses a pool naming any other.
func WithSessionPool(ids ...router.SessionID) Option {
	return func(s *Service) error {
		for _, id := range ids {
			if id <= 0 {
				return fmt.Errorf("trust: session pool ids must be positive, got %d", id)
			}
		}
		s.pool = slices.Clone(ids)
		return nil
	}
}

// WithEscalationThreshold sets the confidence a single run of the adaptive
// tier must report to settle the call alone, without a second run
// (consensus.Stop's Lone); a run below it escalates. t must lie in
// [0, 1]; 0, the default ([DefaultEscalationThreshold]), means that a
// single run never settles a call, and adaptive starts with two runs at
// once. With t > 0 it starts with one, and a call that ends on one
// answer with none against it records t and the confidence that answer
// reported (Evidence.Lone), from which its verdict is recomputed.
func WithEscalationThreshold(t float64) Option {
	return func(s *Service) error {
		if !(t >= 0 && t <= 1) {
			return fmt.Errorf("trust: escalation threshold must be in [0, 1], got %v", t)
		}
		s.threshold = t
		return nil
	}
}

// WithAnswerKey sets when two delegation outputs agree: when key returns
// the same string for both (consensus.Policy.Key). The key is given each
// output as JSON, a json.RawMessage. nil, the default, means
// consensus.DefaultKey. Use the same key as the router's
// (router.WithAnswerKey) so that both count the same agreement.
func WithAnswerKey(key func(answer any) (string, error)) Option {
	return func(s *Service) error { s.key = key; return nil }
}

// WithReceipts makes the service issue receipts through is when a request
// asks for one. is must have a Store. Without this option a request that
// asks for a receipt is refused with 400 naming receipt.mode. It comes
// before [WithSigningKey], [WithSigningKeyFile] and [WithReceiptStore],
// which change a copy of is: given after one of them, it would drop the
// key or the store that option set, and New fails.
func WithReceipts(is *receipt.Issuer) Option {
	return func(s *Service) error {
		if is == nil || is.Store == nil {
			return errors.New("trust: WithReceipts needs an Issuer with a Store")
		}
		if s.issuer != nil {
			return errors.New("trust: WithReceipts given after another receipt option (WithReceipts, WithSigningKey, WithSigningKeyFile or WithReceiptStore) would replace what it set; give WithReceipts first")
		}
		s.issuer = is
		return nil
	}
}

// WithSignedReceipts makes New fail unless receipts are configured with a
// Signer, so that a service meant to sign cannot start without a key.
func WithSignedReceipts() Option {
	return func(s *Service) error { s.signed = true; return nil }
}

// WithLogger sets the logger; by default the service logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error { s.logger = l; return nil }
}
