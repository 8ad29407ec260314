package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/boltstore"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
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
// responses, trial allowances, used payments and receipts. The router
// and trust handlers share it. By default it lives in memory (receipts
// optionally in a bbolt file); with -database-url all of it lives in
// PostgreSQL, shared by every server on that database.
type state struct {
	idempotency router.IdempotencyStore
	// limiter is the trial limit shared by both handlers; nil means each
	// handler keeps its own in-memory bucket per caller.
	limiter  router.RateLimiter
	replay   x402.ReplayStore
	answers  trustmcp.AnswerStore // paid MCP results for retries; nil: in memory
	receipts receipt.Store
	// reputation is where the engine learns its sessions' reliability;
	// nil means the engine's own memory.
	reputation reputation.Store
	where      string // for the banner
	// sweep deletes what has expired, every sweepEvery, until ctx ends.
	sweep func(ctx context.Context)
	// ping reaches the database, for /readyz; nil when the state is in
	// memory.
	ping  func(ctx context.Context) error
	close func()
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
		where:       "memory",
		close:       func() {},
	}
	if cfg.receipts != "" {
		bs, err := boltstore.Open(cfg.receipts, boltLockTimeout)
		if err != nil {
			return nil, fmt.Errorf("-receipts: %w", err)
		}
		st.receipts, st.close = bs, func() { _ = bs.Close() }
		st.where = "memory; receipts in " + cfg.receipts
	}
	st.sweep = func(ctx context.Context) { _ = receipt.Sweep(ctx, st.receipts, sweepEvery, nil, onError) }
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
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	limiter, err := db.TrialLimiter(router.TrialLimit{Rate: cfg.trialRate, Burst: cfg.trialBurst})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("trial limit: %w", err)
	}
	where := "PostgreSQL"
	if u, err := url.Parse(cfg.databaseURL); err == nil && u.Host != "" {
		where += " at " + u.Redacted()
	}
	if cfg.schema != "" {
		where += ", schema " + cfg.schema
	}
	return &state{
		idempotency: db.Idempotency(),
		limiter:     limiter,
		replay:      db.Replay(),
		answers:     db.Answers(),
		receipts:    db.Receipts(),
		reputation:  db.Reputation(),
		where:       where,
		sweep:       func(ctx context.Context) { _ = db.Sweep(ctx, sweepEvery, nil, onError) },
		ping:        db.Pool().Ping,
		close:       db.Close,
	}, nil
}
