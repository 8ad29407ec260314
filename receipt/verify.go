package receipt

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CheckName names one check of [Verifier.Verify]; it is the "name" of a
// check on the wire.
type CheckName string

// The checks of [Verifier.Verify], in the order they run and are listed
// in [Result.Checks].
const (
	CheckSchema     CheckName = "schema"      // the JSON is a receipt ([Receipt])
	CheckSignature  CheckName = "signature"   // signed by a trusted key, unchanged since
	CheckKeyWindow  CheckName = "key_window"  // the key was valid at decision.timestamp, not in the future
	CheckInputHash  CheckName = "input_hash"  // the original input hashes to task_meta.input_hash
	CheckOutputHash CheckName = "output_hash" // the original output hashes to task_meta.output_hash
	CheckExpiry     CheckName = "expiry"      // decision.timestamp plus ttl is still ahead
)

// CheckStatus is the outcome of one check; it is the "status" of a check
// on the wire.
type CheckStatus string

// The outcomes of a check.
const (
	// CheckPassed: the check ran and passed.
	CheckPassed CheckStatus = "passed"
	// CheckFailed: the check ran and failed; Check.Err says why.
	CheckFailed CheckStatus = "failed"
	// CheckSkipped: the check did not run: there was nothing to check
	// against (no original input given), an earlier check made it
	// meaningless (the schema failed), or an Unsafe option waived it.
	CheckSkipped CheckStatus = "skipped"
)

// The former names of the outcomes of a check.
const (
	// Deprecated: use [CheckPassed].
	StatusPassed = CheckPassed
	// Deprecated: use [CheckFailed].
	StatusFailed = CheckFailed
	// Deprecated: use [CheckSkipped].
	StatusSkipped = CheckSkipped
)

// Check is the outcome of one verification step.
type Check struct {
	// Name is one of CheckSchema, CheckSignature, CheckKeyWindow,
	// CheckInputHash, CheckOutputHash, CheckExpiry.
	Name CheckName `json:"name"`
	// Status is passed, failed or skipped.
	Status CheckStatus `json:"status"`
	// Code is a stable machine code of a failure: schema, unsigned,
	// unsupported_scheme, unknown_key, bad_signature, key_window,
	// hash_mismatch or expired. Empty unless Status is failed.
	Code string `json:"code,omitempty"`
	// Detail explains the outcome to a person.
	Detail string `json:"detail,omitempty"`
	// Errors lists the failing fields of a schema failure.
	Errors []FieldError `json:"errors,omitempty"`
	// Err is the failure, wrapping one of the package's sentinels; nil
	// unless Status is failed.
	Err error `json:"-"`
}

// Result records what [Verifier.Verify] checked and found.
type Result struct {
	// ReceiptID is the receipt's id; empty when the schema check failed.
	ReceiptID string
	// Receipt is the decoded receipt; nil when the schema check failed.
	Receipt *Receipt
	// Issuer is signing.issuer: the key the signature was checked against.
	// Empty for an unsigned receipt.
	Issuer string
	// Scheme is signing.signature_scheme.
	Scheme string
	// ExpiresAt is the end of the receipt's retention.
	ExpiresAt time.Time
	// AsIssued reports whether the data verified was the receipt byte for
	// byte as its issuer signed it: its RFC 8785 canonical form, and not
	// another spelling of it. False unless the signature check passed.
	AsIssued bool
	// Checks holds one entry for each check, in the order of the Check
	// constants.
	Checks []Check
}

// Valid reports whether no check failed.
func (r *Result) Valid() bool {
	for _, c := range r.Checks {
		if c.Status == CheckFailed {
			return false
		}
	}
	return true
}

// Check returns the entry of the named check.
func (r *Result) Check(name CheckName) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Originals are the original input and output of a decision, as JSON
// values, to check against the receipt's hashes (see [Hash] for what is
// hashed). A nil member is not checked; the JSON null is checked like any
// other value. A member that has no RFC 8785 form (it is not JSON, or it
// holds a number beyond the range of an IEEE 754 double) fails its check
// with [ErrHashMismatch], the detail naming the reason.
type Originals struct {
	Input  json.RawMessage
	Output json.RawMessage
}

// Verifier checks receipts against a set of trusted keys. Build one with
// [NewVerifier]; it is safe for concurrent use.
type Verifier struct {
	keys           map[string]TrustedKey
	acceptUnsigned bool
	acceptExpired  bool
}

// VerifierOption configures a [Verifier].
type VerifierOption func(*Verifier) error

// WithUnsignedUnsafe makes the Verifier accept a receipt without a signing
// member: its signature check is skipped and anyone could have written
// it. A signed receipt is still checked against the trusted keys.
func WithUnsignedUnsafe() VerifierOption {
	return func(v *Verifier) error { v.acceptUnsigned = true; return nil }
}

// WithExpiredUnsafe makes the Verifier accept a receipt whose retention
// has passed, as when auditing an archive: its expiry check is skipped.
func WithExpiredUnsafe() VerifierOption {
	return func(v *Verifier) error { v.acceptExpired = true; return nil }
}

// NewVerifier returns a Verifier that trusts keys, one per issuer. A
// [TrustedKey], or a pointer to one, bounds the timestamps of the
// receipts its key may sign (a [KeyFile]'s Trusted gives its keys so);
// any other PublicKey is valid at every time. It rejects at once a nil
// key, a TrustedKey whose key is itself a TrustedKey (one key, two
// windows), a key without issuer or scheme, an Ed25519Key of the wrong length,
// not in canonical form or of small order (naming it), two keys with one
// issuer, and an empty set unless [WithUnsignedUnsafe] is given.
func NewVerifier(keys []PublicKey, opts ...VerifierOption) (*Verifier, error) {
	v := &Verifier{keys: make(map[string]TrustedKey, len(keys))}
	for _, opt := range opts {
		if err := opt(v); err != nil {
			return nil, err
		}
	}
	for i, pk := range keys {
		var tk TrustedKey
		switch t := pk.(type) {
		case TrustedKey:
			tk = t
		case *TrustedKey: // its window too, never a key valid at every time
			if t != nil {
				tk = *t
			}
		default:
			tk = TrustedKey{PublicKey: pk}
		}
		k := tk.PublicKey
		if k == nil {
			return nil, fmt.Errorf("receipt: trusted key %d is nil", i)
		}
		if id, nested := innermost(k); nested { // its window would be lost
			return nil, fmt.Errorf("receipt: trusted key %d (%s) is a TrustedKey holding a TrustedKey; give the key one window", i, id)
		}
		if c, ok := k.(interface{ check() error }); ok {
			if err := c.check(); err != nil {
				return nil, fmt.Errorf("receipt: trusted key %d: %w", i, err)
			}
		}
		id := k.Issuer()
		switch {
		case id == "":
			return nil, fmt.Errorf("receipt: trusted key %d has no issuer", i)
		case k.Scheme() == "":
			return nil, fmt.Errorf("receipt: trusted key %d (%s) has no scheme", i, id)
		}
		if _, dup := v.keys[id]; dup {
			return nil, fmt.Errorf("receipt: trusted keys %q appears twice; list each key once", id)
		}
		if !tk.NotAfter.IsZero() && !tk.NotAfter.After(tk.NotBefore) {
			return nil, fmt.Errorf("receipt: trusted key %d (%s) has an empty window", i, id)
		}
		v.keys[id] = tk
	}
	if len(v.keys) == 0 && !v.acceptUnsigned {
		return nil, errors.New("receipt: no trusted keys; pass at least one, or WithUnsignedUnsafe to accept unsigned receipts only")
	}
	return v, nil
}

// innermost reports whether k is a TrustedKey or a pointer to one, and
// the issuer of the key it holds however deep, or "a nil key".
func innermost(k PublicKey) (issuer string, nested bool) {
	for {
		switch t := k.(type) {
		case TrustedKey:
			k = t.PublicKey
		case *TrustedKey:
			if t == nil {
				return "a nil key", true
			}
			k = t.PublicKey
		case nil:
			return "a nil key", nested
		default:
			return t.Issuer(), nested
		}
		nested = true
	}
}

// Verify checks the receipt JSON data: its schema, its signature against
// the trusted keys, that the key was valid at decision.timestamp and that
// the timestamp is not after now (by more than [MaxClockSkew]), its
// hashes against orig, and its expiry at now (a zero now means
// time.Now()). Every check runs and is recorded in the Result, which is
// never nil; the schema check failing skips the rest. The error is nil
// when no check failed; otherwise it joins one error per failed check,
// "receipt: failed to <check>: ...", each wrapping one sentinel
// ([ErrSchema], [ErrUnsigned], [ErrUnsupportedScheme], [ErrUnknownKey],
// [ErrBadSignature], [ErrKeyWindow], [ErrHashMismatch], [ErrExpired]) for
// errors.Is.
//
// data is the receipt object as any JSON writer wrote it (member order,
// white space, escapes and number spellings are free), or a JSON string
// holding that text: the checks run on its RFC 8785 canonical form, the
// bytes the issuer signed, and Result.AsIssued says whether data was that
// form already. A number that the canonical form cannot carry exactly (an
// integer beyond 2^53, more digits than an IEEE 754 double holds) fails
// the schema check with the rule "number", and so does a fraction where
// the receipt holds an integer: the signature covers the canonical form
// alone, so a text whose numbers it would round could otherwise borrow
// the signature of another value. Repeated member names and invalid
// UTF-8 fail it with the rule "jcs". A server's error answer given in
// place of a receipt (an RFC 9457 problem body) fails it with the rule
// [RuleErrorAnswer], naming the answer's status and title.
func (v *Verifier) Verify(data []byte, orig Originals, now time.Time) (*Result, error) {
	if now.IsZero() {
		now = time.Now()
	}
	res := &Result{Checks: make([]Check, 0, 6)}
	canon, asIssued, err := canonicalText(data)
	var r *Receipt
	if err == nil {
		r, err = decode(canon)
	}
	if err != nil {
		if se := errorAnswer(data); se != nil {
			err = se
		}
		c := fail(CheckSchema, err)
		var se *SchemaError
		if errors.As(err, &se) {
			c.Errors = se.Fields
		}
		res.Checks = append(res.Checks, c)
		for _, name := range []CheckName{CheckSignature, CheckKeyWindow, CheckInputHash, CheckOutputHash, CheckExpiry} {
			res.Checks = append(res.Checks, Check{Name: name, Status: CheckSkipped, Detail: "not a valid receipt"})
		}
		return res, c.Err
	}
	sig := v.checkSignature(canon, r, res)
	res.Receipt, res.ReceiptID = r, r.ReceiptID
	res.AsIssued = asIssued && sig.Status == CheckPassed
	res.ExpiresAt, _ = r.ExpiresAt() // the schema check has validated timestamp and ttl
	res.Checks = append(res.Checks,
		Check{Name: CheckSchema, Status: CheckPassed},
		sig,
		v.checkKeyWindow(r, sig, now),
		checkHash(CheckInputHash, orig.Input, r.TaskMeta.InputHash),
		checkHash(CheckOutputHash, orig.Output, r.TaskMeta.OutputHash),
		v.checkExpiry(res.ExpiresAt, now),
	)
	var errs []error
	for _, c := range res.Checks {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	return res, errors.Join(errs...)
}

// MaxClockSkew is how far a receipt's decision.timestamp may lie after
// the verifier's clock: a receipt dated later is not yet issued, and its
// key_window check fails, so that no date stretches a receipt's life.
const MaxClockSkew = 5 * time.Minute

// checkKeyWindow checks that the key that signed r was valid at its
// timestamp, which is not after now by more than MaxClockSkew; it runs
// only when the signature check passed.
func (v *Verifier) checkKeyWindow(r *Receipt, sig Check, now time.Time) Check {
	if sig.Status != CheckPassed {
		return Check{Name: CheckKeyWindow, Status: CheckSkipped, Detail: "no verified signature"}
	}
	key := v.keys[r.Signing.Issuer]
	at, _ := parseTimestamp(r.Decision.Timestamp) // the schema check has validated it
	if !key.validAt(at) {
		return fail(CheckKeyWindow, fmt.Errorf("%w: issued at %s, while the key signed from %s", ErrKeyWindow, r.Decision.Timestamp, key.window()))
	}
	if at.After(now.Add(MaxClockSkew)) {
		return fail(CheckKeyWindow, fmt.Errorf("%w: issued at %s, later than the verifier's clock (%s) by more than %s", ErrKeyWindow, r.Decision.Timestamp, formatTimestamp(now), MaxClockSkew))
	}
	return Check{Name: CheckKeyWindow, Status: CheckPassed, Detail: "key valid from " + key.window()}
}

func (v *Verifier) checkSignature(canon []byte, r *Receipt, res *Result) Check {
	s := r.Signing
	if s == nil {
		if v.acceptUnsigned {
			return Check{Name: CheckSignature, Status: CheckSkipped, Detail: "unsigned receipt accepted by WithUnsignedUnsafe"}
		}
		return fail(CheckSignature, ErrUnsigned)
	}
	res.Issuer, res.Scheme = s.Issuer, s.SignatureScheme
	key, ok := v.keys[s.Issuer]
	if !ok {
		return fail(CheckSignature, fmt.Errorf("%w: issuer %q", ErrUnknownKey, truncate(s.Issuer, 80)))
	}
	if s.SignatureScheme != key.Scheme() {
		return fail(CheckSignature, fmt.Errorf("%w: %q, while issuer %s signs with %q", ErrUnsupportedScheme, truncate(s.SignatureScheme, 40), s.Issuer, key.Scheme()))
	}
	// Strict: the unused low bits of the last character must be zero, so
	// that one signature has one spelling.
	sig, err := base64.RawURLEncoding.Strict().DecodeString(s.Signature)
	if err != nil {
		return fail(CheckSignature, fmt.Errorf("%w: signature is not canonical unpadded base64url", ErrBadSignature))
	}
	msg, err := signingMessage(canon, s.Signature)
	if err != nil {
		return fail(CheckSignature, fmt.Errorf("%w: %v", ErrBadSignature, err))
	}
	if !key.VerifySignature(msg, sig) {
		return fail(CheckSignature, ErrBadSignature)
	}
	return Check{Name: CheckSignature, Status: CheckPassed, Detail: "signed by " + s.Issuer}
}

func checkHash(name CheckName, original json.RawMessage, want string) Check {
	if original == nil {
		return Check{Name: name, Status: CheckSkipped, Detail: "no original given"}
	}
	if want == "" {
		return fail(name, fmt.Errorf("%w: the receipt carries no %s", ErrHashMismatch, name))
	}
	got, err := HashJSON(original)
	if err != nil {
		// Valid JSON too can lack an RFC 8785 form: a number beyond the
		// range of an IEEE 754 double, a repeated member name.
		cause := err
		if u := errors.Unwrap(err); u != nil {
			cause = u // without "receipt: failed to canonicalize JSON"
		}
		return fail(name, fmt.Errorf("%w: the original has no RFC 8785 canonical form to hash: %v", ErrHashMismatch, cause))
	}
	if got != want {
		return fail(name, fmt.Errorf("%w: the original hashes to %s", ErrHashMismatch, got))
	}
	return Check{Name: name, Status: CheckPassed}
}

func (v *Verifier) checkExpiry(expires, now time.Time) Check {
	if now.Before(expires) {
		return Check{Name: CheckExpiry, Status: CheckPassed, Detail: "valid until " + formatTimestamp(expires)}
	}
	if v.acceptExpired {
		return Check{Name: CheckExpiry, Status: CheckSkipped, Detail: "expired at " + formatTimestamp(expires) + "; accepted by WithExpiredUnsafe"}
	}
	return fail(CheckExpiry, fmt.Errorf("%w at %s", ErrExpired, formatTimestamp(expires)))
}

// fail returns a failed check whose Err names the step.
func fail(name CheckName, err error) Check {
	return Check{
		Name:   name,
		Status: CheckFailed,
		Code:   code(err),
		Detail: err.Error(),
		Err:    fmt.Errorf("receipt: failed to check %s: %w", name, err),
	}
}

// code returns the machine code of the sentinel err wraps.
func code(err error) string {
	for _, c := range []struct {
		err  error
		code string
	}{
		{ErrSchema, "schema"},
		{ErrUnsigned, "unsigned"},
		{ErrUnsupportedScheme, "unsupported_scheme"},
		{ErrUnknownKey, "unknown_key"},
		{ErrBadSignature, "bad_signature"},
		{ErrKeyWindow, "key_window"},
		{ErrHashMismatch, "hash_mismatch"},
		{ErrExpired, "expired"},
	} {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "failed"
}
