package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
)

// Receipt is the receipt object (docs/INTERFACE.md, section 10.3): a signed
// record of one decision of the trust service. Members
// chosen by [Include] are pointers or omitempty strings and are absent
// from the JSON when not included.
type Receipt struct {
	// ReceiptID identifies the decision: "rcpt_" and 26 characters of
	// base32 (128 random bits). See [NewID].
	ReceiptID string `json:"receipt_id" validate:"required,receipt_id"`
	// Mode is the call mode: delegation, validation or arbitration.
	Mode string `json:"mode" validate:"required,oneof=delegation validation arbitration"`
	// TaskMeta describes the task by type and hashes, never by content.
	TaskMeta TaskMeta `json:"task_meta"`
	// Decision is the outcome.
	Decision Decision `json:"decision"`
	// PolicySnapshot is the policy that ran; present when included.
	PolicySnapshot *PolicySnapshot `json:"policy_snapshot,omitempty"`
	// ConsensusSnapshot copies the router's consensus block; present when
	// included.
	ConsensusSnapshot *ConsensusSnapshot `json:"consensus_snapshot,omitempty"`
	// CortensorRefs are the operator-level references: the sessions,
	// tasks and trace ids of the router that ran the call; present when
	// router_trace_refs is included. The member keeps the name the
	// receipt specification gives it, written for the Cortensor network;
	// it holds the references of whatever router ran the call.
	CortensorRefs *Refs `json:"cortensor_refs,omitempty"`
	// Signing is the signature; absent from an unsigned receipt.
	Signing *Signing `json:"signing,omitempty"`
	// TTL is the effective retention, "<n>d".
	TTL string `json:"ttl" validate:"required,ttl"`
	// Visibility is the effective visibility.
	Visibility Visibility `json:"visibility" validate:"required,oneof=private shared public"`
}

// TaskMeta is task_meta: the task's type and the hashes of its input and
// output (see [Hash]).
type TaskMeta struct {
	// Type is the task type given by the caller, such as "summarization";
	// it may be empty.
	Type string `json:"type"`
	// InputHash is "sha256:<hex>" of the input; present when included.
	InputHash string `json:"input_hash,omitempty" validate:"omitempty,hash"`
	// OutputHash is "sha256:<hex>" of the output; present when included.
	OutputHash string `json:"output_hash,omitempty" validate:"omitempty,hash"`
}

// Decision is decision: the status, confidence and reasons of the call.
type Decision struct {
	// Status mirrors the top-level status of the response.
	Status string `json:"status" validate:"required,oneof=VALID INVALID RETRY NEEDS_SPEC SELLER_VALID SELLER_INVALID INCONCLUSIVE"`
	// Confidence is a fraction between 0 and 1.
	Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
	// Reasons are short explanations; an empty list when there are none.
	// A receipt of the trust service opens them with the agreement in
	// words ("agreement 0.67 over 3 replicas (3 spent in all)"), kept for
	// readers of earlier receipts; Agreement states the same as numbers.
	Reasons []string `json:"reasons" validate:"required"`
	// Agreement is how far the replicas of the decision agreed and what
	// the call spent; absent from receipts issued before it existed and
	// from those of an issuer that does not state it.
	Agreement *Agreement `json:"agreement,omitempty"`
	// Timestamp is when the decision was recorded, ISO 8601 in UTC with
	// milliseconds: "2026-05-01T12:00:00.000Z".
	Timestamp string `json:"timestamp" validate:"required,utc"`
	// Payment is the payment the decision moves, when the call was paid
	// in escrow; absent otherwise.
	Payment *Payment `json:"payment,omitempty"`
}

// Agreement is decision.agreement: the agreement summary of a decision,
// as numbers.
type Agreement struct {
	// Share is the share of the final step's votes that backed the
	// decision, from 0 to 1 (the response's evidence.agreement).
	Share float64 `json:"share" validate:"gte=0,lte=1"`
	// Replicas is the number of replicas of the final step.
	Replicas int `json:"replicas" validate:"gte=0"`
	// Spent is the number of runs launched in all, over every step of
	// the call (the response's evidence.redundancy).
	Spent int `json:"spent" validate:"gte=0"`
}

// Payment is decision.payment (and a trust response's
// evidence.payment): a call paid in escrow (x402 "auth-capture"), its
// hold placed before the call ran, and what the decision commits the hold
// to. The decision is recorded before the payment is finished: Outcome
// is the lifecycle the decision commits to, not the payment's final
// state, which the payment response's escrow report (and the seller's
// escrow ledger) tell. Amounts are atomic units of Asset, in decimal.
type Payment struct {
	// Scheme is the payment scheme: "auth-capture".
	Scheme string `json:"scheme" validate:"required"`
	// Network and Asset name the money: a CAIP-2 network and the token's
	// address on it.
	Network string `json:"network" validate:"required"`
	Asset   string `json:"asset" validate:"required"`
	// ID is the escrowed payment's id: its PaymentInfo hash on EVM
	// networks.
	ID string `json:"id" validate:"required"`
	// Held is the amount held before the call ran.
	Held string `json:"held" validate:"amount"`
	// PerRun is the price of one run when the call is charged by the
	// runs it launched; absent for a call at a fixed price.
	PerRun string `json:"per_run,omitempty" validate:"omitempty,amount"`
	// Outcome is what the decision does with the hold: "capture" (a
	// decision the payment buys, such as a definitive VALID or INVALID on
	// the paid trust call) or "void" (any other).
	Outcome string `json:"outcome" validate:"required,oneof=capture void"`
	// Capture is the amount the outcome captures: the whole hold, or
	// PerRun times the runs launched, at most Held; "0" for a void. An
	// Issuer refuses a payment that breaks this.
	Capture string `json:"capture" validate:"amount"`
}

// checkCapture checks that p captures at most what it held, and nothing
// when it voids.
func (p *Payment) checkCapture() error {
	held, okHeld := new(big.Int).SetString(p.Held, 10)
	capture, okCapture := new(big.Int).SetString(p.Capture, 10)
	switch {
	case !okHeld || held.Sign() < 0:
		return fmt.Errorf("held %q is not an amount", p.Held)
	case !okCapture || capture.Sign() < 0:
		return fmt.Errorf("capture %q is not an amount", p.Capture)
	case capture.Cmp(held) > 0:
		return fmt.Errorf("capture %s is more than the %s held", p.Capture, p.Held)
	case p.Outcome == "void" && capture.Sign() != 0:
		return fmt.Errorf("a void captures %s, not 0", p.Capture)
	}
	return nil
}

// Refs is cortensor_refs: the operator-level references behind a decision.
// Each list is empty, not null, when there is nothing to name.
type Refs struct {
	// Sessions are the session ids the replicas ran on.
	Sessions []int64 `json:"sessions" validate:"required"`
	// Tasks are the router's task ids.
	Tasks []string `json:"tasks" validate:"required"`
	// RouterTraceIDs are the trace ids of the router calls.
	RouterTraceIDs []string `json:"router_trace_ids" validate:"required"`
}

// Signing is the signing member. See [Signer] for what is signed.
type Signing struct {
	// Issuer names the signing key, such as "ed25519:<base64url key>".
	Issuer string `json:"issuer" validate:"required"`
	// SignatureScheme names the scheme, such as [SchemeEd25519].
	SignatureScheme string `json:"signature_scheme" validate:"required"`
	// Signature is the signature in unpadded base64url.
	Signature string `json:"signature" validate:"required"`
	// ChainAnchor is JSON null: receipts are not anchored on a chain.
	ChainAnchor json.RawMessage `json:"chain_anchor" validate:"null"`
}

// IssuedAt returns decision.timestamp as a time.
func (r *Receipt) IssuedAt() (time.Time, error) {
	return parseTimestamp(r.Decision.Timestamp)
}

// ExpiresAt returns the end of the receipt's retention: decision.timestamp
// plus ttl days. A receipt is expired at that instant and after.
func (r *Receipt) ExpiresAt() (time.Time, error) {
	at, err := r.IssuedAt()
	if err != nil {
		return time.Time{}, err
	}
	days, ok := parseTTL(r.TTL)
	if !ok {
		return time.Time{}, fmt.Errorf("receipt: ttl %q is not a count of days", r.TTL)
	}
	return at.Add(retention(days)), nil
}

// Parse decodes and checks a receipt, read as [Verifier.Verify] reads it:
// data is the receipt object in any JSON spelling, or a string holding
// its JSON; it must be valid RFC 8785 input (no repeated member names,
// valid UTF-8, every number carried exactly by its canonical form), its
// canonical form must decode into [Receipt] (unknown members are
// ignored), and each field must follow the rules of [Receipt] and its
// members. Failures are a *[SchemaError] (errors.Is [ErrSchema]). Parse
// does not check the signature; use [Verifier.Verify] for that.
func Parse(data []byte) (*Receipt, error) {
	canon, _, err := canonicalText(data)
	if err != nil {
		return nil, err
	}
	return decode(canon)
}

// decode is Parse without the canonicalizer's checks. It decodes with
// github.com/go-json-experiment/json, several times faster than
// encoding/json, matching member names exactly, as RFC 8785 and every
// other reader of the receipt do. When that fails or gives an invalid
// receipt, it decodes again with jsonbody (encoding/json, whose errors
// name the field path) for the errors; encoding/json matches member names
// without regard to case, so when it reads a valid receipt (one that
// spells "mode" as "Mode") the errors are those of the exact reading.
func decode(data []byte) (*Receipt, error) {
	var r Receipt
	exactErr := jsonv2.Unmarshal(data, &r)
	var invalid []FieldError
	if exactErr == nil {
		if invalid = validate.Struct(&r); invalid == nil {
			if r.Signing != nil && r.Signing.ChainAnchor == nil {
				r.Signing.ChainAnchor = json.RawMessage("null") // absent reads as null
			}
			return &r, nil
		}
	}
	var loose Receipt
	if err := jsonbody.Unmarshal(data, &loose); err != nil {
		return nil, fractionRule(data, schemaError(err))
	}
	if errs := validate.Struct(&loose); errs != nil {
		return nil, &SchemaError{Fields: errs}
	}
	if exactErr != nil {
		return nil, schemaError(exactErr)
	}
	return nil, &SchemaError{Fields: invalid}
}

// fractionRule gives the rule "number" to the type failure of err when
// data holds a number with a fraction where the receipt holds an integer
// (encoding/json reports the first such value).
func fractionRule(data []byte, err error) error {
	var typ *json.UnmarshalTypeError
	se, ok := err.(*SchemaError)
	if !ok || !errors.As(json.Unmarshal(data, new(Receipt)), &typ) || !strings.HasPrefix(typ.Value, "number") {
		return err
	}
	switch typ.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return err
	}
	for i, f := range se.Fields {
		if f.Rule == "type" {
			se.Fields[i].Rule = "number"
			se.Fields[i].Message = "must be an integer: " + f.Message
		}
	}
	return se
}

// schemaError turns a decoding problem into a SchemaError.
func schemaError(err error) error {
	if p, ok := err.(*problem.Details); ok {
		if len(p.Errors) > 0 {
			return &SchemaError{Fields: p.Errors}
		}
		return &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: "json", Message: p.Detail}}}
	}
	return &SchemaError{Fields: []FieldError{{Field: "(body)", Rule: "json", Message: err.Error()}}}
}

// timestampLayout writes decision.timestamp: RFC 3339 in UTC with exactly
// three fractional digits.
const timestampLayout = "2006-01-02T15:04:05.000Z"

func formatTimestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }

// parseTimestamp accepts RFC 3339 in UTC ("Z"), with or without a
// fraction.
func parseTimestamp(s string) (time.Time, error) {
	if !strings.HasSuffix(s, "Z") {
		return time.Time{}, fmt.Errorf("receipt: timestamp %q is not in UTC", s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("receipt: timestamp %q is not RFC 3339", s)
	}
	return t, nil
}

// validate holds the schema rules of a receipt. It is built once and only
// read afterwards (it caches struct metadata, as encoding/json does).
var validate = valid.New(map[string]valid.Rule{
	"receipt_id": {
		Check: func(fl validator.FieldLevel) bool { return ValidID(fl.Field().String()) },
		Message: func(_ string, v any) string {
			return fmt.Sprintf(`must be "rcpt_" and 26 base32 characters, got %q`, v)
		},
	},
	"ttl": {
		Check: func(fl validator.FieldLevel) bool {
			_, ok := parseTTL(fl.Field().String())
			return ok
		},
		Message: func(_ string, v any) string { return fmt.Sprintf(`must be a count of days written "<n>d", got %q`, v) },
	},
	"hash": {
		Check: func(fl validator.FieldLevel) bool { return validHash(fl.Field().String()) },
		Message: func(_ string, v any) string {
			return fmt.Sprintf(`must be "sha256:" and 64 lowercase hex digits, got %q`, v)
		},
	},
	"utc": {
		Check: func(fl validator.FieldLevel) bool {
			_, err := parseTimestamp(fl.Field().String())
			return err == nil
		},
		Message: func(_ string, v any) string {
			return fmt.Sprintf(`must be an RFC 3339 time in UTC, such as "2026-05-01T12:00:00.000Z", got %q`, v)
		},
	},
	"amount": {
		Check: func(fl validator.FieldLevel) bool { return validAmount(fl.Field().String()) },
		Message: func(_ string, v any) string {
			return fmt.Sprintf(`must be an amount in atomic units, decimal digits without a leading zero, got %q`, v)
		},
	},
	"null": {
		Check: func(fl validator.FieldLevel) bool {
			f := fl.Field()
			if f.Kind() != reflect.Slice {
				return false
			}
			b := bytes.TrimSpace(f.Bytes())
			return len(b) == 0 || bytes.Equal(b, []byte("null"))
		},
		Message: func(string, any) string { return "must be null: receipts are not anchored on a chain" },
	},
})

// validAmount reports whether s is a non-negative integer in decimal
// without a leading zero.
func validAmount(s string) bool {
	if s == "" || len(s) > 78 || (s[0] == '0' && len(s) > 1) { // 78 digits hold 2^256
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// invalid returns a 400 problem listing errs.
func invalid(errs []FieldError) error { return problem.Invalid(errs) }
