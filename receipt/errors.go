package receipt

import (
	"errors"
	"strings"

	"github.com/vouchkit/vouch/problem"
)

// Sentinel errors. Each failure of [Verifier.Verify] wraps exactly one of
// them, so a caller tells a forged receipt from an expired one with
// errors.Is and never by the text.
var (
	// ErrSchema: the data is not a receipt object ([Receipt]). The
	// error also carries a *[SchemaError] naming the fields.
	ErrSchema = errors.New("receipt: not a valid receipt")
	// ErrUnsigned: the receipt has no signing member and the Verifier does
	// not accept unsigned receipts (see [WithUnsignedUnsafe]).
	ErrUnsigned = errors.New("receipt: receipt is not signed")
	// ErrUnsupportedScheme: signing.signature_scheme is not the scheme of
	// the trusted key named by signing.issuer.
	ErrUnsupportedScheme = errors.New("receipt: unsupported signature scheme")
	// ErrUnknownKey: signing.issuer names no trusted key.
	ErrUnknownKey = errors.New("receipt: signed by a key that is not trusted")
	// ErrBadSignature: the signature is not a valid signature of the
	// receipt by the named key; the receipt was changed after signing or
	// signed by another key.
	ErrBadSignature = errors.New("receipt: signature does not match the receipt")
	// ErrKeyWindow: the receipt's decision.timestamp lies outside the
	// validity window of the trusted key that signed it (see
	// [TrustedKey]): a retired key cannot sign new receipts; or it lies
	// after the verifier's clock by more than [MaxClockSkew].
	ErrKeyWindow = errors.New("receipt: the key was not valid when the receipt was issued")
	// ErrHashMismatch: the original input or output given to Verify does
	// not hash to the receipt's input_hash or output_hash, or the receipt
	// carries no such hash.
	ErrHashMismatch = errors.New("receipt: hash does not match")
	// ErrExpired: the receipt's retention (decision.timestamp plus ttl) has
	// passed.
	ErrExpired = errors.New("receipt: receipt has expired")

	// ErrCheckpoint: a checkpoint is not a C2SP signed note of a
	// tlog-checkpoint signed by a trusted log key.
	ErrCheckpoint = errors.New("receipt: checkpoint is not signed by a trusted log key")
	// ErrNotInLog: an inclusion proof does not show the receipt in the
	// tree of the checkpoint.
	ErrNotInLog = errors.New("receipt: receipt is not proved to be in the log")
	// ErrInconsistent: a consistency proof does not show the newer tree
	// extending the older one: the log was rewritten or shrank.
	ErrInconsistent = errors.New("receipt: the log did not only grow")

	// ErrNotFound: no receipt with that id is visible to the caller: it
	// does not exist, has expired, or belongs to someone else. The three
	// are one error so that existence is not leaked.
	ErrNotFound = errors.New("receipt: not found")
	// ErrDuplicate: a store already holds a receipt with that id.
	ErrDuplicate = errors.New("receipt: id already stored")
	// ErrNotRequested: [Issuer.Issue] was called for a request block whose
	// mode is none (or empty); no receipt is built.
	ErrNotRequested = errors.New("receipt: no receipt requested")
)

// Error is the RFC 9457 problem the package returns for invalid input, the
// same type as router.Error, so errors.As finds it whichever layer
// produced it.
type Error = problem.Details

// FieldError names one field that failed validation by its JSON path.
type FieldError = problem.FieldError

// SchemaError lists why data is not a receipt: the fields that failed, by
// JSON path ("decision.confidence"), or a single "(body)" entry when the
// data is not JSON of the right shape. errors.Is(err, ErrSchema) reports
// true for it.
type SchemaError struct {
	Fields []FieldError
}

// Error lists the failing fields on one line.
func (e *SchemaError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return "receipt: not a valid receipt: " + strings.Join(parts, "; ")
}

// Is reports whether target is [ErrSchema].
func (e *SchemaError) Is(target error) bool { return target == ErrSchema }
