package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/boltstore"
	"github.com/vouchkit/vouch/reputation"
	reputationbolt "github.com/vouchkit/vouch/reputation/boltstore"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	escrowbolt "github.com/vouchkit/vouch/x402/boltstore"
)

// Timings of the server's state.
const (
	// sweepEvery is how often expired receipts (and, in PostgreSQL,
	// expired keys and refilled trial buckets) are deleted.
	sweepEvery = time.Minute
	// openTimeout bounds connecting to PostgreSQL and migrating its schema.
	openTimeout = 30 * time.Second
	// boltLockTimeout is how long to wait for another process to release
	// the receipts file.
	boltLockTimeout = time.Second
)

// state is what the server keeps beyond one request: idempotent
// responses, trial allowances, used payments, escrowed payments and
// receipts. The router and trust handlers share it. By default it lives
// in memory (receipts, escrowed payments and the sessions' reputation
// optionally in bbolt files);
// with -database-url all of it lives in PostgreSQL, shared by every
// server on that database.
type state struct {
	idempotency router.IdempotencyStore
	// limiter is the trial limit shared by both handlers; nil means each
	// handler keeps its own in-memory bucket per caller.
	limiter  router.RateLimiter
	replay   x402.ReplayStore
	outcomes x402.OutcomeStore    // answers of escrowed payments for retries; nil: in memory
	answers  trustmcp.AnswerStore // paid MCP results for retries; nil: in memory
	receipts receipt.Store
	// escrow keeps the lifecycle of the escrowed payments.
	escrow x402.EscrowLedger
	// paymentIDs keeps the first response to each x402 payment id.
	paymentIDs x402.PaymentIDStore
	// reputation is where the engine learns its sessions' reliability
	// (PostgreSQL, or a bbolt file); nil means the engine's own memory.
	reputation reputation.Store
	where      string // for the banner
	// sweep deletes what has expired, every sweepEvery, until ctx ends.
	sweep func(ctx context.Context)
	// ping reaches the database, for /readyz; nil when the state is in
	// memory.
	ping  func(ctx context.Context) error
	close func()
}

// closeAlso has st.close close c first, then what it closed before.
func (st *state) closeAlso(c io.Closer) {
	before := st.close
	st.close = func() { _ = c.Close(); before() }
}

// openState opens the stores the flags name.
func openState(ctx context.Context, cfg config, log *slog.Logger) (*state, error) {
	onError := func(err error) { log.Warn("sweep failed", "error", err) }
	if cfg.databaseURL != "" {
		return openDatabase(ctx, cfg, onError)
	}
	st := &state{
		idempotency: &router.MemoryIdempotencyStore{},
		replay:      &x402.MemoryReplay{},
		receipts:    &receipt.MemStore{},
		escrow:      &x402.MemoryEscrowLedger{},
		paymentIDs:  &x402.MemoryPaymentIDs{},
		where:       "memory",
		close:       func() {},
	}
	if cfg.receipts != "" {
		bs, err := boltstore.Open(cfg.receipts, boltLockTimeout)
		if err != nil {
			return nil, fmt.Errorf("-receipts: %w", err)
		}
		st.receipts = bs
		st.closeAlso(bs)
		st.where = "memory; receipts in " + cfg.receipts
	}
	if cfg.reputationFile != "" {
		rs, err := reputationbolt.Open(cfg.reputationFile, boltLockTimeout)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("-reputation: %w", err)
		}
		st.reputation = rs
		st.closeAlso(rs)
		st.where += "; reputation in " + cfg.reputationFile
	}
	var forget func(ctx context.Context, now time.Time) (int, error) // the escrow ledger's expired payments
	if cfg.escrowLedger != "" {
		l, err := escrowbolt.Open(cfg.escrowLedger, boltLockTimeout)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("-escrow-ledger: %w", err)
		}
		st.closeAlso(l)
		ids, outcomes := l.PaymentIDs(), l.Outcomes()
		st.escrow, st.paymentIDs, st.outcomes = l, ids, outcomes
		forget = func(ctx context.Context, now time.Time) (int, error) {
			n, err := l.DeleteExpired(ctx, now)
			m, err2 := ids.DeleteExpired(ctx, now)
			k, err3 := outcomes.DeleteExpired(ctx, now)
			return n + m + k, errors.Join(err, err2, err3)
		}
		st.where += "; escrowed payments in " + cfg.escrowLedger
	}
	st.sweep = func(ctx context.Context) {
		if forget == nil {
			_ = receipt.Sweep(ctx, st.receipts, sweepEvery, nil, onError)
			return
		}
		var wg sync.WaitGroup
		wg.Go(func() { _ = receipt.Sweep(ctx, st.receipts, sweepEvery, nil, onError) })
		every(ctx, sweepEvery, func() {
			if _, err := forget(ctx, time.Now()); err != nil && ctx.Err() == nil {
				onError(err)
			}
		})
		wg.Wait()
	}
	return st, nil
}

// openDatabase opens the PostgreSQL stores: one pool for all of them.
func openDatabase(ctx context.Context, cfg config, onError func(error)) (*state, error) {
	var opts []pgstore.Option
	if cfg.schema != "" {
		opts = append(opts, pgstore.WithSchema(cfg.schema))
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	db, err := pgstore.Open(octx, cfg.databaseURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.databaseURLFrom, err)
	}
	limiter, err := db.TrialLimiter(router.TrialLimit{Rate: cfg.trialRate, Burst: cfg.trialBurst})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("trial limit: %w", err)
	}
	where := "PostgreSQL"
	if u, err := url.Parse(cfg.databaseURL); err == nil && u.Host != "" {
		// The query may hold a password too (password=, sslpassword=).
		u.RawQuery, u.Fragment = "", ""
		where += " at " + u.Redacted()
	}
	if cfg.schema != "" {
		where += ", schema " + cfg.schema
	}
	return &state{
		idempotency: db.Idempotency(),
		limiter:     limiter,
		replay:      db.Replay(),
		outcomes:    db.Outcomes(),
		answers:     db.Answers(),
		receipts:    db.Receipts(),
		escrow:      db.Escrow(),
		paymentIDs:  db.PaymentIDs(),
		reputation:  db.Reputation(),
		where:       where,
		sweep:       func(ctx context.Context) { _ = db.Sweep(ctx, sweepEvery, nil, onError) },
		ping:        db.Pool().Ping,
		close:       db.Close,
	}, nil
}

// every calls f every interval until ctx is done.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
