package receipt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"
)

// Issuer builds, hashes, signs and stores receipts (steps 2 and 3 of the
// receipt lifecycle: decision, receipt, answer, lookup). Set its fields and call Issue; it is safe
// for concurrent use once configured, and must not be changed afterwards.
type Issuer struct {
	// Signer signs each receipt. Nil means receipts are unsigned: they
	// have no signing member and only a Verifier built with
	// WithUnsignedUnsafe accepts them.
	Signer Signer
	// Store keeps each receipt for its retention, for lookup. It is
	// required.
	Store Store
	// Environment clamps ttl and visibility. The zero value is
	// ProductionEnvironment().
	Environment Environment
	// Now returns the time of each decision. Nil means time.Now.
	Now func() time.Time
}

// Params is what the trust layer knows of one decision: what ran, what it
// decided, and who asked. The Issuer writes the members that
// Request.Include chooses and drops the rest.
type Params struct {
	// Request is the caller's receipt block. Its Mode must be inline or
	// detached.
	Request Request
	// Mode is the call mode: delegation, validation or arbitration.
	Mode string
	// TaskType is the task's type, such as "summarization"; may be empty.
	TaskType string
	// Input is the task's input, hashed into task_meta.input_hash as
	// described at Hash. A json.RawMessage is hashed as the JSON it holds.
	Input any
	// Output is the chosen output, hashed into task_meta.output_hash.
	Output any
	// Status is the top-level status of the response.
	Status string
	// Confidence is the top-level confidence, between 0 and 1.
	Confidence float64
	// Reasons are short explanations of the status.
	Reasons []string
	// Agreement is decision.agreement; nil leaves it out.
	Agreement *Agreement
	// Policy is the tier and redundancy that ran; required when
	// Request.Include.PolicySnapshot is set.
	Policy *PolicySnapshot
	// Consensus is the router's consensus block of the final step;
	// required when Request.Include.ConsensusSnapshot is set.
	Consensus *ConsensusSnapshot
	// Refs are the sessions, tasks and trace ids used; required when
	// Request.Include.RouterTraceRefs is set.
	Refs *Refs
	// Payment is the payment the decision moves, when the call was paid
	// in escrow: decision.payment. Nil for an unpaid call.
	Payment *Payment
	// Owner identifies the calling integration: the only one who may
	// fetch a private receipt. Required.
	Owner string
	// Counterparties may also fetch the receipt when its effective
	// visibility is shared, beside those Request.Counterparties names.
	Counterparties []string
	// At is when the decision was made: decision.timestamp, to the
	// millisecond. Zero means the Issuer's clock at Issue.
	At time.Time
}

// Issued is a receipt as issued: the decoded receipt, its exact signed
// bytes (what the store holds and lookup returns), and its expiry.
type Issued struct {
	// Receipt is the receipt.
	Receipt *Receipt
	// JSON is the receipt in RFC 8785 canonical form, signed and stored.
	JSON []byte
	// Delivery is inline or detached, from the request.
	Delivery Delivery
	// ExpiresAt ends its retention.
	ExpiresAt time.Time
	// Clamped reports whether ttl or visibility was narrowed by the
	// environment.
	Clamped bool
}

// Ref is the minimal metadata a detached response carries instead of the
// receipt: enough to fetch it and know how long it lives.
type Ref struct {
	// ReceiptID is the receipt's id, under which it is fetched.
	ReceiptID string `json:"receipt_id"`
	// TTL is the receipt's retention as it records it, "<n>d".
	TTL string `json:"ttl"`
	// Visibility is who may fetch the receipt.
	Visibility Visibility `json:"visibility"`
	// ExpiresAt is when the receipt stops being served, ISO 8601 UTC.
	ExpiresAt string `json:"expires_at"`
}

// Ref returns the detached form of the receipt.
func (is *Issued) Ref() Ref {
	return Ref{
		ReceiptID:  is.Receipt.ReceiptID,
		TTL:        is.Receipt.TTL,
		Visibility: is.Receipt.Visibility,
		ExpiresAt:  formatTimestamp(is.ExpiresAt),
	}
}

// ResponseMember returns the value of the response envelope's "receipt"
// member: the signed receipt bytes for inline delivery, the [Ref] for
// detached.
func (is *Issued) ResponseMember() json.RawMessage {
	if is.Delivery == DeliveryInline {
		return is.JSON
	}
	b, _ := json.Marshal(is.Ref()) // a Ref of strings always encodes
	return b
}

// Issue builds the receipt of one decision, signs it with is.Signer if
// set, stores it, and returns it. The receipt gets a new id from [NewID]
// and a timestamp from is.Now, in whole milliseconds; ttl and visibility
// are clamped by is.Environment, never refused.
//
// It returns [ErrNotRequested] when p.Request asks for no receipt, a 400
// *[Error] naming "receipt.<field>" when p.Request is invalid, and an
// error describing the mistake when other params are incomplete (an
// unknown mode or status, no owner, a requested snapshot that is nil).
// Signing and storing errors are wrapped with the step that failed. No
// receipt is returned unless it was stored.
//
// The receipt returned owns its data: it shares no slice or pointer with
// p, which the caller may change or reuse once Issue returns.
func (is *Issuer) Issue(ctx context.Context, p Params) (*Issued, error) {
	if !p.Request.Requested() {
		if errs := p.Request.FieldErrors("receipt"); errs != nil {
			return nil, invalid(errs)
		}
		return nil, ErrNotRequested
	}
	if err := p.Request.Validate(); err != nil {
		return nil, err
	}
	if is.Store == nil {
		return nil, errors.New("receipt: Issuer.Store is nil")
	}
	terms, err := is.Environment.Clamp(p.Request)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if is.Now != nil {
		now = is.Now
	}
	at := p.At
	if at.IsZero() {
		at = now()
	}
	at = at.UTC().Truncate(time.Millisecond)
	r, err := build(NewID(), at, terms, &p)
	if err != nil {
		return nil, err
	}
	data, err := sign(ctx, is.Signer, r)
	if err != nil {
		return nil, err
	}
	expires := at.Add(retention(terms.TTLDays))
	rec := Record{
		ID:             r.ReceiptID,
		Data:           data,
		Owner:          p.Owner,
		Visibility:     terms.Visibility,
		Counterparties: counterparties(&p),
		ExpiresAt:      expires,
	}
	if err := is.Store.Put(ctx, rec); err != nil {
		return nil, fmt.Errorf("receipt: failed to store receipt %s: %w", r.ReceiptID, err)
	}
	return &Issued{Receipt: r, JSON: data, Delivery: p.Request.Mode, ExpiresAt: expires, Clamped: terms.Clamped}, nil
}

// build assembles the unsigned receipt of p.
func build(id string, at time.Time, terms Terms, p *Params) (*Receipt, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	inc := p.Request.Include
	r := &Receipt{
		ReceiptID: id,
		Mode:      p.Mode,
		TaskMeta:  TaskMeta{Type: p.TaskType},
		Decision: Decision{
			Status:     p.Status,
			Confidence: p.Confidence,
			Reasons:    nonNil(p.Reasons),
			Timestamp:  formatTimestamp(at),
		},
		TTL:        terms.TTL(),
		Visibility: terms.Visibility,
	}
	if p.Agreement != nil {
		a := *p.Agreement
		r.Decision.Agreement = &a
	}
	if p.Payment != nil {
		if err := p.Payment.checkCapture(); err != nil {
			return nil, fmt.Errorf("receipt: decision.payment: %w", err)
		}
		pay := *p.Payment
		r.Decision.Payment = &pay
	}
	var err error
	if inc.InputHash {
		if r.TaskMeta.InputHash, err = Hash(p.Input); err != nil {
			return nil, fmt.Errorf("receipt: failed to hash input: %w", err)
		}
	}
	if inc.OutputHash {
		if r.TaskMeta.OutputHash, err = Hash(p.Output); err != nil {
			return nil, fmt.Errorf("receipt: failed to hash output: %w", err)
		}
	}
	if inc.PolicySnapshot {
		ps := *p.Policy
		if c := ps.Calibration; c != nil {
			cc := *c
			cc.Points = nonNil(cc.Points)
			ps.Calibration = &cc
		}
		ps.Leader, ps.Dissent, ps.Lone = copyOf(ps.Leader), copyOf(ps.Dissent), copyOf(ps.Lone)
		if pl := ps.Plurality; pl != nil {
			cp := *pl
			cp.Groups = slices.Clone(pl.Groups)
			ps.Plurality = &cp
		}
		for _, l := range []struct {
			name string
			*LeaderSnapshot
		}{{"leader", ps.Leader}, {"dissent", ps.Dissent}} {
			if l.LeaderSnapshot != nil && (l.Session > maxExactInteger || l.Session < -maxExactInteger) {
				return nil, fmt.Errorf("receipt: policy_snapshot.%s.session_id is %d, beyond 2^53: RFC 8785 writes numbers as IEEE 754 doubles and would round it, so it cannot be signed", l.name, l.Session)
			}
		}
		r.PolicySnapshot = &ps
	}
	if inc.ConsensusSnapshot {
		cs := *p.Consensus
		cs.Verdicts = nonNil(cs.Verdicts)
		cs.Agreeing, cs.Weights = slices.Clone(cs.Agreeing), slices.Clone(cs.Weights)
		cs.Tolerance, cs.Aggregate = copyOf(cs.Tolerance), copyOf(cs.Aggregate)
		if cs.Numbers != nil {
			cs.Numbers = make([]*float64, len(p.Consensus.Numbers))
			for i, n := range p.Consensus.Numbers {
				cs.Numbers[i] = copyOf(n)
			}
		}
		r.ConsensusSnapshot = &cs
	}
	if inc.RouterTraceRefs {
		for i, id := range p.Refs.Sessions {
			if id > maxExactInteger || id < -maxExactInteger {
				return nil, fmt.Errorf("receipt: cortensor_refs.sessions[%d] is %d, beyond 2^53: RFC 8785 writes numbers as IEEE 754 doubles and would round it, so it cannot be signed", i, id)
			}
		}
		r.CortensorRefs = &Refs{
			Sessions:       nonNil(p.Refs.Sessions),
			Tasks:          nonNil(p.Refs.Tasks),
			RouterTraceIDs: nonNil(p.Refs.RouterTraceIDs),
		}
	}
	// The Issuer writes only receipts its own Verifier would accept, and
	// names a number JSON cannot write rather than fail to encode it.
	if errs := nonFinite(reflect.ValueOf(r).Elem()); errs != nil {
		return nil, fmt.Errorf("receipt: failed to build receipt: %w", &SchemaError{Fields: errs})
	}
	if errs := validate.Struct(r); errs != nil {
		return nil, fmt.Errorf("receipt: failed to build receipt: %w", &SchemaError{Fields: errs})
	}
	return r, nil
}

// maxExactInteger is 2^53, the largest magnitude below which every
// integer has an exact IEEE 754 double, and so an exact RFC 8785 form.
const maxExactInteger = 1 << 53

// check rejects params the trust layer should never pass.
func (p *Params) check() error {
	inc := p.Request.Include
	switch {
	case p.Owner == "":
		return errors.New("receipt: Params.Owner is empty; a receipt needs an owner to be fetched")
	case math.IsNaN(p.Confidence):
		return errors.New("receipt: Params.Confidence is NaN")
	case inc.PolicySnapshot && p.Policy == nil:
		return errors.New("receipt: policy_snapshot is included but Params.Policy is nil")
	case inc.ConsensusSnapshot && p.Consensus == nil:
		return errors.New("receipt: consensus_snapshot is included but Params.Consensus is nil")
	case inc.RouterTraceRefs && p.Refs == nil:
		return errors.New("receipt: router_trace_refs is included but Params.Refs is nil")
	}
	return nil
}

// sign signs r in place with s (when not nil) and returns its canonical
// JSON. The signed message is the canonical JSON of r with
// signing.signature "" (see SchemeEd25519).
func sign(ctx context.Context, s Signer, r *Receipt) ([]byte, error) {
	if s == nil {
		return encode(r)
	}
	if s.Issuer() == "" || s.Scheme() == "" {
		return nil, errors.New("receipt: Signer has an empty issuer or scheme")
	}
	r.Signing = &Signing{Issuer: s.Issuer(), SignatureScheme: s.Scheme(), ChainAnchor: json.RawMessage("null")}
	msg, err := encode(r)
	if err != nil {
		return nil, err
	}
	sig, err := s.Sign(ctx, msg)
	if err != nil {
		return nil, fmt.Errorf("receipt: failed to sign receipt: %w", err)
	}
	r.Signing.Signature = base64.RawURLEncoding.EncodeToString(sig)
	return signedJSON(msg, r.Signing.Signature)
}

// counterparties returns who besides the owner may fetch the receipt of
// p: the names its receipt block gives, then those of p.Counterparties it
// does not, each once, in a slice of its own.
func counterparties(p *Params) []string {
	out := slices.Clone(p.Request.Counterparties)
	for _, c := range p.Counterparties {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// copyOf returns a pointer to a copy of *v, or nil for nil, so that a
// receipt shares no pointer with the Params it was built from.
func copyOf[T any](v *T) *T {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

// nonNil returns a copy of s, empty rather than nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}
