package router

import (
	"context"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// About is the body of GET /api/v1/about, which a [Handler] answers
// without credentials: what the server is, the variants it serves, and
// what its x402 routes cost. The public router documents the route but
// not its body; these members are vouch's.
type About struct {
	// Service names the server: "vouch router" unless the host names it
	// ([WithServiceInfo]).
	Service string `json:"service"`
	// Version is the server's release: the vouch release (the one the
	// trust service reports as service_version), unless the host names
	// one.
	Version string `json:"version"`
	// Variants lists the variants served: normal and trial always, x402
	// when the Handler has the x402 middleware ([WithX402]).
	Variants []Variant `json:"variants"`
	// Prices lists the price of each x402 route the host priced, in the
	// order of [Routes] ([WithX402Prices]), then the prices of the other
	// routes the price map names by one method and path, such as the
	// trust service's "POST /api/v4/x402/trust"; absent when the host
	// gave no prices.
	Prices []RoutePrice `json:"prices,omitempty"`
}

// RoutePrice is what one x402 route costs.
type RoutePrice struct {
	// Method and Path name the route ("POST", "/api/v1/x402/factcheck").
	Method string `json:"method"`
	Path   string `json:"path"`
	// Description tells a person what the payment buys.
	Description string `json:"description,omitempty"`
	// Accepts lists the offers a payer may choose from, as x402 version 2
	// writes them (networks in CAIP-2 form, amounts in atomic units).
	Accepts []x402.PaymentRequirements `json:"accepts"`
}

// Status is the body of GET /api/v1/status, which a [Handler] answers to
// an authenticated caller: the Service's sessions and the Handler's count
// of calls by route. The public router documents the route (401 without
// credentials) but not its body; these members are vouch's.
type Status struct {
	// Sessions lists the sessions with their health and pools, as the
	// Service reports them ([StatusReporter]); absent when the Service
	// does not.
	Sessions []SessionStatus `json:"sessions,omitempty"`
	// Calls counts, by route ("POST /api/v1/factcheck"), the requests the
	// Handler admitted since it was built: past the credential check, the
	// trial limit or the payment, whatever their outcome, replays
	// included. Every route of the Handler is listed, with zero if need
	// be, and the routes of the handlers added by [WithStatusCalls] (the
	// trust service's /api/v4 routes). A Service leaves it empty; the
	// Handler fills it in.
	Calls map[string]int64 `json:"calls,omitempty"`
}

// SessionStatus is the state of one session.
type SessionStatus struct {
	// ID identifies the session.
	ID SessionID `json:"session_id"`
	// Pool names the worker pool behind the session; empty means a pool
	// of its own.
	Pool string `json:"pool,omitempty"`
	// Tiers lists the tiers the session serves; empty means every tier.
	Tiers []Tier `json:"tiers,omitempty"`
	// Health says whether calls may use the session.
	Health SessionHealth `json:"health"`
	// Failures counts the session's failed runs in a row.
	Failures int `json:"failures"`
	// CoolingUntil is when a session cooling down may be used again; zero
	// (absent) otherwise.
	CoolingUntil time.Time `json:"cooling_until,omitzero"`
}

// SessionHealth is the health of a session (see "Health" on [Engine]).
type SessionHealth string

// The health states of a session.
const (
	// HealthHealthy: calls use the session. It may have failed fewer
	// times in a row than the threshold.
	HealthHealthy SessionHealth = "healthy"
	// HealthCoolingDown: the session failed too often in a row and is
	// skipped until CoolingUntil.
	HealthCoolingDown SessionHealth = "cooling_down"
	// HealthHalfOpen: the cooldown is over; the next call may use the
	// session again, and one more failure sends it back to cool down.
	HealthHalfOpen SessionHealth = "half_open"
)

// StatusReporter is implemented by a [Service] that can describe its
// sessions: the [Engine] reports its own, and the [Client] asks the
// remote router's GET /api/v1/status. A [Handler] whose Service
// implements it reports the sessions on GET /api/v1/status.
//
// Status must be safe for concurrent use and return a value the caller
// may keep and modify.
type StatusReporter interface {
	// Status returns the sessions with their pools, tiers and health.
	Status(ctx context.Context) (*Status, error)
}
