package pgstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
)

// TrialLimiter is the trial rate limit of the router, kept in the table
// vouch_trial_limits so that every server on the database draws from one
// bucket per caller. It behaves as a token bucket of x/time/rate with the
// same rate and burst: a caller starts with Burst requests, and regains
// one every 1/Rate.
//
// Each decision is one INSERT … ON CONFLICT … DO UPDATE statement that
// applies the generic cell rate algorithm (GCRA) to the caller's row
// under the row's lock: the row keeps the theoretical arrival time (TAT)
// of the caller's next request, a request at now is allowed when
// max(TAT, now) + 1/Rate − now ≤ Burst/Rate, and an allowed request moves
// TAT to max(TAT, now) + 1/Rate. Concurrent requests of one caller on any
// servers are thus serialized by PostgreSQL, and never both take the last
// token.
//
// Time is an argument and comes from each server's clock; servers whose
// clocks differ by d grant up to d×Rate extra requests. Rows of callers
// whose bucket is full again are removed by [DB.DeleteExpired]. One
// database holds one trial limit: limiters with different rates on one
// database share the callers' rows, so give their callers distinct
// prefixes.
type TrialLimiter struct {
	db       *DB
	inf      bool
	interval time.Duration // 1/Rate, in whole microseconds
	burst    int
}

// TrialLimiter returns the shared limiter for l's Rate and Burst (zero
// meaning router.DefaultTrialRate and router.DefaultTrialBurst, as for the
// router's own limiter; l.MaxCallers does not apply: the table grows with
// the callers and is swept; l.IPv6Prefix does not apply either: the
// Handler names callers, grouping IPv6 addresses by prefix, before it
// asks the limiter). Rate must be positive (rate.Inf allows every
// request without a query) and Burst at least one.
func (db *DB) TrialLimiter(l router.TrialLimit) (*TrialLimiter, error) {
	if l.Rate == 0 {
		l.Rate = router.DefaultTrialRate
	}
	if l.Burst == 0 {
		l.Burst = router.DefaultTrialBurst
	}
	if l.Rate == rate.Inf {
		return &TrialLimiter{db: db, inf: true}, nil
	}
	if l.Rate < 0 || math.IsNaN(float64(l.Rate)) || l.Burst < 0 {
		return nil, fmt.Errorf("pgstore: trial limit %+v: rate must be positive and burst at least one", l)
	}
	us := math.Round(float64(time.Second/time.Microsecond) / float64(l.Rate))
	if us < 1 || us > float64(math.MaxInt64/int64(time.Microsecond))/float64(l.Burst) {
		return nil, fmt.Errorf("pgstore: trial limit %+v: rate out of range", l)
	}
	return &TrialLimiter{db: db, interval: time.Duration(us) * time.Microsecond, burst: l.Burst}, nil
}

// Allow takes one request from caller's bucket at now. When the bucket is
// empty it reports false and how long until a request will be allowed;
// the caller's bucket is left unchanged. An error means no decision was
// made.
func (l *TrialLimiter) Allow(ctx context.Context, caller string, now time.Time) (ok bool, retryAfter time.Duration, err error) {
	if l.inf {
		return true, 0, nil
	}
	ctx, cancel, err := l.db.query(ctx)
	if err != nil {
		return false, 0, err
	}
	defer cancel()
	// $2 now, $3 the interval and $4 the burst's span, in microseconds.
	var tat time.Time
	err = l.db.pool.QueryRow(ctx, `
		INSERT INTO vouch_trial_limits AS t (caller, tat, allowed)
		VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond', $3 <= $4)
		ON CONFLICT (caller) DO UPDATE SET
			allowed = GREATEST(t.tat, $2) + $3 * interval '1 microsecond' <= $2::timestamptz + $4 * interval '1 microsecond',
			tat = CASE
				WHEN GREATEST(t.tat, $2) + $3 * interval '1 microsecond' <= $2::timestamptz + $4 * interval '1 microsecond'
				THEN GREATEST(t.tat, $2) + $3 * interval '1 microsecond'
				ELSE t.tat END
		RETURNING allowed, tat`,
		textKey(caller), now, l.interval.Microseconds(), int64(l.burst)*l.interval.Microseconds()).Scan(&ok, &tat)
	if err != nil {
		return false, 0, fmt.Errorf("pgstore: trial rate limit: %w", err)
	}
	if ok {
		return true, 0, nil
	}
	// Refused: the next request fits once TAT + interval − now ≤ burst span.
	wait := tat.Sub(now) + l.interval - time.Duration(l.burst)*l.interval
	return false, max(wait, time.Microsecond), nil
}
