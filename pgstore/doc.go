// Package pgstore keeps the state that vouch servers share in one PostgreSQL
// database, so that several stateless servers behind a load balancer behave
// as one. It stores receipts ([ReceiptStore], a receipt.Store), idempotency
// keys ([IdempotencyStore], a router.IdempotencyStore), the trial rate limit
// ([TrialLimiter]), payment replay protection ([ReplayStore], an
// x402.ReplayStore), the outcomes of payments on gated and "auth-capture"
// routes ([OutcomeStore], an x402.OutcomeStore), the first response to
// each payment id ([PaymentIDStore], an x402.PaymentIDStore), the results
// of paid MCP tool calls ([AnswerStore], a trustmcp.AnswerStore), what
// the engines learned of their sessions' reliability ([ReputationStore],
// a reputation.Store) and the lifecycle of escrowed payments
// ([EscrowLedger], an x402.EscrowLedger). A program with one server needs
// none of it: the in-memory and embedded stores stay the default.
//
//	db, err := pgstore.Open(ctx, "postgres://vouch@db.internal/vouch")
//	if err != nil { ... }
//	defer db.Close()
//	go db.Sweep(ctx, time.Minute, nil, nil)
//	// hand db.Receipts(), db.Idempotency(), db.Replay(), db.Outcomes(),
//	// db.Answers() and the limiter from db.TrialLimiter(limit) to the
//	// handlers.
//
// # Where the package sits
//
// pgstore is an adapter: it imports receipt, reputation, router and x402 to implement
// their interfaces, and none of them imports it. Keeping it outside those
// packages keeps imports one-way (the library's packages know nothing of
// PostgreSQL) and keeps pgx out of every program that does not ask for
// it; only a program that imports pgstore links the database driver.
// [AnswerStore] has the methods of trustmcp.AnswerStore without importing
// trustmcp, which would link the MCP SDK into every program that uses
// pgstore.
//
// # Schema and migrations
//
// The schema is embedded in the binary (migrations/*.sql) and [Open]
// applies whatever the database lacks with goose
// (github.com/pressly/goose/v3), which records applied versions in the
// table vouch_schema_version. goose was chosen because its Provider API
// keeps no global state, reads migrations from an embed.FS, and serializes
// concurrent starts with a PostgreSQL advisory lock (servers starting
// together apply each migration once), while adding only three small
// modules; jackc/tern is pgx-native but brings a template library and
// about ten modules with it. goose runs over database/sql on the same
// pgx pool (pgx/v5/stdlib). [WithSchema] puts the tables in a schema of
// their own.
//
// # Queries
//
// Every method takes a context, checks it before any work, and bounds its
// query by a timeout ([DefaultQueryTimeout], see [WithQueryTimeout]). The
// pool is pgxpool's, configured by the URL (pool_max_conns, ...) or by
// [WithPoolConfig]. Each decision that must hold across servers is one
// that PostgreSQL makes atomic, never a read followed by a write of
// another statement: a receipt id or a payment authorization is claimed
// by its primary key (INSERT … ON CONFLICT), an idempotency key and a
// payment id likewise, and a trial request updates its caller's bucket
// under the row's lock. Where the new state is computed in Go
// (reputation evidence, an escrowed payment's lifecycle), one
// transaction reads the rows under their lock (SELECT … FOR UPDATE) and
// writes them back.
//
// # Time
//
// As in the interfaces it implements, time is an argument: expiries and
// rate limits are computed from the now each server passes, not from the
// database's clock, so servers should keep their clocks in sync (NTP).
// Instants are kept to the microsecond.
//
// # Tests
//
// The package's tests run against the database named by the environment
// variable VOUCH_TEST_DATABASE_URL, each test in a schema of its own, and
// skip when it is unset, unless CI is set, when they fail.
// scripts/pg-test.sh starts a throwaway cluster and prints that variable.
package pgstore
