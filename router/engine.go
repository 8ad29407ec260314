package router

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Defaults of an [Engine], each replaced by the [EngineOption] named in
// its comment.
const (
	// DefaultReplicaTimeout bounds one run when the request sets no
	// policy.timeout_ms ([WithReplicaTimeout]).
	DefaultReplicaTimeout = 60 * time.Second
	// DefaultCallTimeout bounds a whole call, all replicas included
	// ([WithCallTimeout]).
	DefaultCallTimeout = 2 * time.Minute
	// DefaultMaxSteps is the step budget when the request sets no
	// execution.max_steps ([WithMaxSteps]).
	DefaultMaxSteps = 100
	// DefaultFailureThreshold is how many failures in a row send a
	// session to cool down ([WithHealth]).
	DefaultFailureThreshold = 3
	// DefaultCooldown is how long a failing session is skipped
	// ([WithHealth]).
	DefaultCooldown = 30 * time.Second
	// DefaultStopGrace is how long the engine waits for a cancelled
	// worker to return before abandoning it ([WithStopGrace]).
	DefaultStopGrace = time.Second
)

// Errors of [NewEngine]. Each is wrapped with the offending session or
// option; match them with errors.Is.
var (
	// ErrNoSessions means the engine was given no sessions.
	ErrNoSessions = errors.New("router: engine needs at least one session")
	// ErrInvalidSession means a session has a zero or negative id, a
	// duplicate id, a nil worker or an unknown tier.
	ErrInvalidSession = errors.New("router: invalid session")
	// ErrInvalidOption means an option was given a value out of range.
	ErrInvalidOption = errors.New("router: invalid engine option")
)

// Engine runs the router's operations in-process on the host's own
// [Worker] functions. It implements [Service].
//
// An Engine is built from sessions by [NewEngine]. Versions 1 and 2 run
// one job on the request's session_id. Version 3 runs consensus.replicas
// jobs, each on its own session, and aggregates them by majority (see the
// v3 methods for selection and policies).
//
// Every call first validates its request and returns the 400 [*Error] of
// Validate. A worker's failure never becomes a panic or a stuck call: a
// worker that panics, returns an error or a result outside the job's
// bounds (a nil result, a verdict the operation does not know, more steps
// than the budget, a confidence outside [0, 1], a usage count or cost
// below zero or a cost that is not a finite number, an output
// encoding/json cannot encode) gives an ERROR run; one still working at its deadline
// gives a TIMEOUT run. The run's Error field says why.
//
// # Time
//
// Each run's deadline is policy.timeout_ms (or [DefaultReplicaTimeout])
// and never later than the call's, which is [DefaultCallTimeout] after the
// call starts, or ctx's deadline if earlier. Workers get the deadline
// through their context. A worker is run in a goroutine of its own (one
// per replica in version 3, where the replicas of a call share one
// context and one deadline): when its context ends, the engine stops
// waiting for it, gives it [DefaultStopGrace] to return, and then
// abandons it. An abandoned worker cannot be killed; its goroutine lives
// on until Work returns, its result is discarded, its run is recorded as
// TIMEOUT (or CANCELLED when the outcome was decided without it or the
// caller gave up), and the engine logs a warning. Workers that honour
// their context, returning within the grace, therefore leave no goroutine
// behind once a call returns. Under a caller's deadline too near for the
// call's budget and the whole grace, a version 3 call shortens both so as
// to answer before it: the grace is then at most a tenth of the time
// left, and a worker slower than that to return is abandoned.
//
// # Health
//
// A session whose runs fail [DefaultFailureThreshold] times in a row
// (ERROR, or TIMEOUT while the caller was still waiting and under the
// engine's own bound; a run cancelled because the outcome was decided,
// whatever its worker returns once cancelled (an error, or a result that
// is no answer), or timed out under a policy.timeout_ms shorter than
// [WithReplicaTimeout]'s, a bound the caller chose, does not count) is
// skipped for [DefaultCooldown]. After that it is half open: the next
// call may use it again, a success restores it, and a failure sends it
// back to cool down at once. Several calls may try a half-open session
// concurrently. A version 1 or 2 call naming a cooling session fails
// with 503 (code unavailable). The clock is [WithEngineClock]'s, which
// also measures each run's latency.
//
// An Engine is safe for concurrent use by multiple goroutines. The zero
// Engine has no sessions and is not usable: build one with [NewEngine].
type Engine struct {
	sessions []*session             // in the order given to NewEngine
	byID     map[SessionID]*session // the same sessions by id

	now            func() time.Time
	log            *slog.Logger
	replicaTimeout time.Duration
	callTimeout    time.Duration
	stopGrace      time.Duration
	maxSteps       int
	threshold      int
	cooldown       time.Duration
	answerKey      func(answer any) (string, error)
	failures       consensus.FailureMode

	next       atomic.Uint64 // rotates the start of version 3 selection
	tasks      atomic.Uint64 // counts task ids
	taskPrefix string        // starts every task id

	tel *engineTelemetry // spans and metrics (WithEngineTelemetry)

	rep          *reputation.Book // nil: reputation off (WithReputation)
	maxShare     float64          // WithSelection
	exploreEvery int
	usage        usage              // the sessions of the latest runs
	calls        *reputation.Ledger // the latest calls by trace id, for Feedback
	taught       shares             // each caller's share of the latest calls that teach
	reported     shares             // and of the latest reports (WithCallerShare)
}

var _ Service = (*Engine)(nil)

// EngineOption configures an [Engine] built by [NewEngine].
type EngineOption func(*Engine) error

// WithEngineLogger sets the logger of the engine's warnings (abandoned workers,
// recovered panics, sessions sent to cool down). nil, the default, is
// silent.
func WithEngineLogger(l *slog.Logger) EngineOption {
	return func(e *Engine) error {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		e.log = l
		return nil
	}
}

// WithEngineClock sets the clock of health cooldowns and run latencies. nil,
// the default, means time.Now. Deadlines are real timers whatever the
// clock.
func WithEngineClock(now func() time.Time) EngineOption {
	return func(e *Engine) error {
		if now == nil {
			now = time.Now
		}
		e.now = now
		return nil
	}
}

// WithReplicaTimeout sets the bound of one run when the request sets no
// policy.timeout_ms. d must be positive; the default is
// [DefaultReplicaTimeout].
func WithReplicaTimeout(d time.Duration) EngineOption {
	return func(e *Engine) error {
		if d <= 0 {
			return fmt.Errorf("%w: replica timeout %v is not positive", ErrInvalidOption, d)
		}
		e.replicaTimeout = d
		return nil
	}
}

// WithCallTimeout sets the bound of a whole call, all replicas included.
// d must be positive; the default is [DefaultCallTimeout].
func WithCallTimeout(d time.Duration) EngineOption {
	return func(e *Engine) error {
		if d <= 0 {
			return fmt.Errorf("%w: call timeout %v is not positive", ErrInvalidOption, d)
		}
		e.callTimeout = d
		return nil
	}
}

// WithStopGrace sets how long the engine waits for a worker to return
// once its context has ended, before abandoning it. d must not be
// negative; the default is [DefaultStopGrace].
func WithStopGrace(d time.Duration) EngineOption {
	return func(e *Engine) error {
		if d < 0 {
			return fmt.Errorf("%w: stop grace %v is negative", ErrInvalidOption, d)
		}
		e.stopGrace = d
		return nil
	}
}

// WithMaxSteps sets the step budget of a run when the request sets no
// execution.max_steps (validate and factcheck requests never do). n must
// not be negative; 0 means no budget. The default is [DefaultMaxSteps].
func WithMaxSteps(n int) EngineOption {
	return func(e *Engine) error {
		if n < 0 {
			return fmt.Errorf("%w: max steps %d is negative", ErrInvalidOption, n)
		}
		e.maxSteps = n
		return nil
	}
}

// WithHealth sets how many failed runs in a row send a session to cool
// down, and for how long. threshold must be positive and cooldown not
// negative; a zero cooldown keeps failing sessions in use. The defaults
// are [DefaultFailureThreshold] and [DefaultCooldown].
func WithHealth(threshold int, cooldown time.Duration) EngineOption {
	return func(e *Engine) error {
		if threshold <= 0 {
			return fmt.Errorf("%w: failure threshold %d is not positive", ErrInvalidOption, threshold)
		}
		if cooldown < 0 {
			return fmt.Errorf("%w: cooldown %v is negative", ErrInvalidOption, cooldown)
		}
		e.threshold, e.cooldown = threshold, cooldown
		return nil
	}
}

// WithAnswerKey sets when two outputs of a version 3 delegation agree:
// when key returns the same string for both. The key is given each
// output as JSON, a json.RawMessage; it must be deterministic and safe
// for concurrent use, and its error fails the call with a 500 *Error.
// nil, the default, means consensus.DefaultKey: equal canonical JSON,
// strings compared with white space trimmed and folded.
func WithAnswerKey(key func(answer any) (string, error)) EngineOption {
	return func(e *Engine) error {
		e.answerKey = key
		return nil
	}
}

// WithFailureMode sets how replicas that gave no answer (TIMEOUT, ERROR)
// count in version 3: consensus.FailuresNonVotes, the default, ignores
// them; consensus.FailuresNegative counts them as one group of negative
// evidence that competes with the answers ("some replicas
// time out").
func WithFailureMode(m consensus.FailureMode) EngineOption {
	return func(e *Engine) error {
		switch m {
		case "", consensus.FailuresNonVotes, consensus.FailuresNegative:
			e.failures = m
			return nil
		}
		return fmt.Errorf("%w: unknown failure mode %q", ErrInvalidOption, m)
	}
}

// NewEngine returns an engine that routes work through sessions, in the
// order given (which is the order of version 3 selection, see
// [Engine.ValidateV3]). Each session needs a positive id unique in the
// set, a non-nil worker, and router tiers only (fast, safe, oracle,
// balanced). NewEngine copies the sessions; the caller may reuse the
// slice.
//
// The error wraps [ErrNoSessions], [ErrInvalidSession] or
// [ErrInvalidOption].
func NewEngine(sessions []Session, opts ...EngineOption) (*Engine, error) {
	if len(sessions) == 0 {
		return nil, ErrNoSessions
	}
	e := &Engine{
		byID:           make(map[SessionID]*session, len(sessions)),
		now:            time.Now,
		log:            slog.New(slog.DiscardHandler),
		replicaTimeout: DefaultReplicaTimeout,
		callTimeout:    DefaultCallTimeout,
		stopGrace:      DefaultStopGrace,
		maxSteps:       DefaultMaxSteps,
		threshold:      DefaultFailureThreshold,
		cooldown:       DefaultCooldown,
		taskPrefix:     strings.ToLower(rand.Text()[:12]),
		maxShare:       DefaultMaxShare,
		exploreEvery:   DefaultExploreEvery,
		calls:          reputation.NewLedger(DefaultFeedbackMemory),
		taught:         shares{bound: DefaultCallerShare},
		reported:       shares{bound: DefaultCallerShare},
	}
	rep, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		return nil, err
	}
	e.rep = rep
	for i, s := range sessions {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%w: sessions[%d]: %s", ErrInvalidSession, i, err)
		}
		if _, dup := e.byID[s.ID]; dup {
			return nil, fmt.Errorf("%w: sessions[%d]: id %d appears twice", ErrInvalidSession, i, s.ID)
		}
		ss := &session{Session: s}
		ss.Tiers = append([]Tier(nil), s.Tiers...)
		e.sessions = append(e.sessions, ss)
		e.byID[s.ID] = ss
	}
	// The global providers by default; WithEngineTelemetry with the no-op
	// providers leaves e.tel nil, which records nothing.
	e.tel = newEngineTelemetry(nil, nil)
	for _, opt := range opts {
		if err := opt(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}
