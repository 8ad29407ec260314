package receipt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vouchkit/vouch/internal/valid"
)

// Delivery is receipt.mode of the request block: whether a receipt is made
// and how the response carries it. It is named apart from the call mode
// (delegation, validation, arbitration) that the receipt records.
type Delivery string

// The deliveries a receipt request may ask for.
const (
	// DeliveryNone asks for no receipt; it is the default.
	DeliveryNone Delivery = "none"
	// DeliveryInline embeds the whole signed receipt in the response.
	DeliveryInline Delivery = "inline"
	// DeliveryDetached puts only a [Ref] in the response; the receipt is
	// fetched later by its id.
	DeliveryDetached Delivery = "detached"
)

// Visibility says who may fetch a receipt.
type Visibility string

// The visibilities.
const (
	// VisibilityPrivate: only the integration that made the call.
	VisibilityPrivate Visibility = "private"
	// VisibilityShared: that integration and the counterparties named when
	// the receipt was issued.
	VisibilityShared Visibility = "shared"
	// VisibilityPublic is a possible future mode. Every [Environment]
	// clamps it to [VisibilityShared] for now.
	VisibilityPublic Visibility = "public"
)

// wider reports whether v grants more readers than w.
func (v Visibility) wider(w Visibility) bool { return v.rank() > w.rank() }

func (v Visibility) rank() int {
	switch v {
	case VisibilityShared:
		return 1
	case VisibilityPublic:
		return 2
	}
	return 0
}

// Request is the receipt block of a trust call, the member
// "receipt" of the request envelope. It is a hint: the [Environment]
// clamps ttl and visibility, and the receipt records the effective values.
//
// Request carries no validate tags, so a struct that embeds it can be
// checked by any validator; call [Request.FieldErrors] for its rules.
type Request struct {
	// Mode is none (or empty: no receipt), inline or detached. A block
	// that asks for no receipt sets no other member: one would be
	// dropped, so [Request.FieldErrors] refuses it.
	Mode Delivery `json:"mode,omitempty"`
	// Include chooses the optional members of the receipt.
	Include Include `json:"include,omitzero"`
	// TTL is the requested retention as a count of days, "<n>d" with n
	// from 1 to 99999, such as "30d". Empty means the environment's
	// default.
	TTL string `json:"ttl,omitempty"`
	// Visibility is private, shared or public. Empty means private.
	Visibility Visibility `json:"visibility,omitempty"`
	// Counterparties name the integrations, besides the caller, that may
	// fetch a shared receipt, by the names the server's authenticator
	// gives them, each once and none of white space only. The interface
	// says shared receipts go to "chosen counterparties" without saying
	// where they are chosen; this member is that place (an addition to
	// the receipt block). They are refused with private visibility, the
	// default, where no one but the caller reads the receipt; public,
	// granted as shared, takes them.
	Counterparties []string `json:"counterparties,omitempty"`
}

// maxCounterparties bounds the counterparties one receipt names.
const maxCounterparties = 32

// Include chooses the optional members of a receipt. A member whose flag
// is false or absent is absent from the receipt's JSON.
type Include struct {
	// ConsensusSnapshot adds consensus_snapshot: a copy of the router's
	// consensus response block.
	ConsensusSnapshot bool `json:"consensus_snapshot,omitempty"`
	// PolicySnapshot adds policy_snapshot: tier, replicas and strategy.
	PolicySnapshot bool `json:"policy_snapshot,omitempty"`
	// InputHash adds task_meta.input_hash.
	InputHash bool `json:"input_hash,omitempty"`
	// OutputHash adds task_meta.output_hash.
	OutputHash bool `json:"output_hash,omitempty"`
	// RouterTraceRefs adds cortensor_refs: the sessions, task ids and
	// router trace ids behind the decision.
	RouterTraceRefs bool `json:"router_trace_refs,omitempty"`
}

// Requested reports whether r asks for a receipt: its mode is inline or
// detached.
func (r Request) Requested() bool {
	return r.Mode == DeliveryInline || r.Mode == DeliveryDetached
}

// terms reports whether r sets a member besides Mode: an include flag, a
// ttl, a visibility or a counterparty.
func (r Request) terms() bool {
	return r.Include != (Include{}) || r.TTL != "" || r.Visibility != "" || len(r.Counterparties) > 0
}

// FieldErrors checks r and returns its failures with JSON paths under
// prefix: with prefix "receipt", a bad ttl is reported as "receipt.ttl".
// It returns nil when r is valid.
//
// Beyond the value of each member, a block that asks for no receipt (mode
// absent or none) must set nothing else, which would be dropped; and
// counterparties need a shared or public visibility, hold text other
// than white space, and are named once.
func (r Request) FieldErrors(prefix string) []FieldError {
	var errs []FieldError
	switch r.Mode {
	case "", DeliveryNone:
		if r.terms() {
			msg := "is required when other receipt members are given: inline or detached"
			if r.Mode == DeliveryNone {
				msg = "must be inline or detached when other receipt members are given; none asks for no receipt"
			}
			errs = append(errs, FieldError{Field: valid.Join(prefix, "mode"), Rule: "required", Message: msg})
		}
	case DeliveryInline, DeliveryDetached:
	default:
		errs = append(errs, FieldError{
			Field: valid.Join(prefix, "mode"), Rule: "oneof",
			Message: fmt.Sprintf("must be one of none, inline, detached, got %q", r.Mode),
		})
	}
	if r.TTL != "" {
		if _, ok := parseTTL(r.TTL); !ok {
			errs = append(errs, FieldError{
				Field: valid.Join(prefix, "ttl"), Rule: "ttl",
				Message: fmt.Sprintf(`must be a count of days from 1 to 99999 written "<n>d", such as "30d", got %q`, r.TTL),
			})
		}
	}
	switch r.Visibility {
	case "", VisibilityPrivate, VisibilityShared, VisibilityPublic:
	default:
		errs = append(errs, FieldError{
			Field: valid.Join(prefix, "visibility"), Rule: "oneof",
			Message: fmt.Sprintf("must be one of private, shared, public, got %q", r.Visibility),
		})
	}
	if len(r.Counterparties) > maxCounterparties {
		errs = append(errs, FieldError{
			Field: valid.Join(prefix, "counterparties"), Rule: "max",
			Message: fmt.Sprintf("must have at most %d elements", maxCounterparties),
		})
	}
	for i, c := range r.Counterparties {
		switch {
		case c == "":
			errs = append(errs, FieldError{
				Field: fmt.Sprintf("%s[%d]", valid.Join(prefix, "counterparties"), i), Rule: "required",
				Message: "must be a name of 1 to 200 characters",
			})
		case utf8.RuneCountInString(c) > 200: // characters, as every length of the wire
			errs = append(errs, FieldError{
				Field: fmt.Sprintf("%s[%d]", valid.Join(prefix, "counterparties"), i), Rule: "max",
				Message: "must be a name of 1 to 200 characters",
			})
		case strings.TrimSpace(c) == "":
			// No caller is so named: the rule text of the router's
			// required text members, which refuses white space only.
			errs = append(errs, FieldError{
				Field: fmt.Sprintf("%s[%d]", valid.Join(prefix, "counterparties"), i), Rule: "text",
				Message: "must hold text, not white space only",
			})
		case !keepableName(c):
			// No caller is so named, and a durable store (PostgreSQL's
			// text) cannot keep it: refused before the work runs.
			errs = append(errs, FieldError{
				Field: fmt.Sprintf("%s[%d]", valid.Join(prefix, "counterparties"), i), Rule: "pattern",
				Message: "must be valid UTF-8 without a NUL character",
			})
		}
	}
	if len(r.Counterparties) > 0 {
		switch r.Visibility {
		case "", VisibilityPrivate:
			msg := "name who may read a shared receipt; visibility is private"
			if r.Visibility == "" {
				msg += " (the default)"
			}
			errs = append(errs, FieldError{Field: valid.Join(prefix, "counterparties"), Rule: "shared_only", Message: msg})
		}
	}
	seen := make(map[string]int, len(r.Counterparties))
	for _, c := range r.Counterparties {
		if seen[c]++; seen[c] == 2 && strings.TrimSpace(c) != "" {
			errs = append(errs, FieldError{
				Field: valid.Join(prefix, "counterparties"), Rule: "unique",
				Message: fmt.Sprintf("must not repeat a name, got %q more than once", c),
			})
		}
	}
	return errs
}

// Validate checks r as the block "receipt" of a trust request and returns
// nil or a 400 *[Error] naming each failing field ("receipt.ttl").
func (r Request) Validate() error {
	if errs := r.FieldErrors("receipt"); errs != nil {
		return invalid(errs)
	}
	return nil
}

// maxTTLDays bounds the digits of a ttl, so that no count overflows a
// duration (99999 days is about 274 years).
const maxTTLDays = 99999

// parseTTL reads "<n>d" with n in 1..99999 and no sign, space or leading
// zero.
func parseTTL(s string) (days int, ok bool) {
	digits, found := strings.CutSuffix(s, "d")
	if !found || digits == "" || len(digits) > 5 || digits[0] == '0' {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n >= 1 && n <= maxTTLDays
}

// formatTTL writes days as "<n>d".
func formatTTL(days int) string { return strconv.Itoa(days) + "d" }
