package receipt

import (
	"fmt"
	"time"
)

// Environment is the governance policy that turns a receipt request into
// effective terms. A request beyond what the environment allows is clamped,
// never refused: the receipt records the effective ttl and
// visibility, and the caller reads them there.
//
// The zero Environment stands for [ProductionEnvironment].
type Environment struct {
	// Name labels the environment, such as "test" or "production".
	Name string
	// MaxTTLDays is the longest retention, in days; a longer ttl is
	// clamped to it. It must be positive.
	MaxTTLDays int
	// DefaultTTLDays is the retention when the request names none. It must
	// be positive; above MaxTTLDays it is clamped like a requested ttl.
	DefaultTTLDays int
	// MaxVisibility is the widest visibility granted: private or shared.
	// A wider request is clamped to it. Empty means shared.
	MaxVisibility Visibility
}

// TestEnvironment returns the policy for test deployments: ttl at most 7
// days (default 7), visibility at most shared.
func TestEnvironment() Environment {
	return Environment{Name: "test", MaxTTLDays: 7, DefaultTTLDays: 7, MaxVisibility: VisibilityShared}
}

// ProductionEnvironment returns the policy for production: ttl at most 90
// days (default 30), visibility at most shared.
func ProductionEnvironment() Environment {
	return Environment{Name: "production", MaxTTLDays: 90, DefaultTTLDays: 30, MaxVisibility: VisibilityShared}
}

// Terms are the effective retention and visibility of one receipt.
type Terms struct {
	// TTLDays is the effective retention in days.
	TTLDays int
	// Visibility is the effective visibility.
	Visibility Visibility
	// Clamped reports whether the request asked for more than the
	// environment grants (a longer ttl or a wider visibility).
	Clamped bool
}

// TTL returns the retention written as in a receipt: "<n>d".
func (t Terms) TTL() string { return formatTTL(t.TTLDays) }

// Clamp returns the effective terms of r under e: the requested ttl (or
// e.DefaultTTLDays) capped at e.MaxTTLDays, and the requested visibility
// (or private) narrowed to e.MaxVisibility. r is not validated here; an
// invalid ttl or visibility counts as absent. It returns an error only when
// e itself is invalid.
func (e Environment) Clamp(r Request) (Terms, error) {
	e = e.orDefault()
	if err := e.check(); err != nil {
		return Terms{}, err
	}
	t := Terms{TTLDays: e.DefaultTTLDays, Visibility: VisibilityPrivate}
	if days, ok := parseTTL(r.TTL); ok {
		t.TTLDays = days
		t.Clamped = days > e.MaxTTLDays
	}
	t.TTLDays = min(t.TTLDays, e.MaxTTLDays)
	switch r.Visibility {
	case VisibilityShared, VisibilityPublic:
		t.Visibility = r.Visibility
	}
	if t.Visibility.wider(e.maxVisibility()) {
		t.Visibility = e.maxVisibility()
		t.Clamped = true
	}
	return t, nil
}

func (e Environment) orDefault() Environment {
	if e == (Environment{}) {
		return ProductionEnvironment()
	}
	return e
}

func (e Environment) maxVisibility() Visibility {
	if e.MaxVisibility == "" {
		return VisibilityShared
	}
	return e.MaxVisibility
}

// check rejects an environment that cannot produce valid terms.
func (e Environment) check() error {
	switch {
	case e.MaxTTLDays <= 0 || e.MaxTTLDays > maxTTLDays:
		return fmt.Errorf("receipt: environment %q: MaxTTLDays must be between 1 and %d, got %d", e.Name, maxTTLDays, e.MaxTTLDays)
	case e.DefaultTTLDays <= 0:
		return fmt.Errorf("receipt: environment %q: DefaultTTLDays must be positive, got %d", e.Name, e.DefaultTTLDays)
	}
	switch e.MaxVisibility {
	case "", VisibilityPrivate, VisibilityShared:
		return nil
	case VisibilityPublic:
		return fmt.Errorf("receipt: environment %q: MaxVisibility public is a future mode and not available; use shared", e.Name)
	}
	return fmt.Errorf("receipt: environment %q: MaxVisibility must be private or shared, got %q", e.Name, e.MaxVisibility)
}

// retention returns the duration of ttl days.
func retention(days int) time.Duration { return time.Duration(days) * 24 * time.Hour }
