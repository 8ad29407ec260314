package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds the schema, applied in order by [Open].
//
//go:embed migrations/*.sql
var migrations embed.FS

// DefaultQueryTimeout bounds each query unless [WithQueryTimeout] says
// otherwise.
const DefaultQueryTimeout = 5 * time.Second

// uniqueViolation is the SQLSTATE of unique_violation.
const uniqueViolation = "23505"

// versionTable records the migrations applied to a schema.
const versionTable = "vouch_schema_version"

// DB is a pool of connections to one PostgreSQL database whose schema is
// up to date. Its methods hand out the stores, which share the pool. A DB
// is safe for concurrent use; Close it when done.
type DB struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	batch   int // the most rows one statement of a sweep deletes
}

// sweepBatch is the most rows one statement of [DB.DeleteExpired]
// deletes.
const sweepBatch = 1000

// Option configures [Open].
type Option func(*options) error

type options struct {
	schema  string
	timeout time.Duration
	pool    func(*pgxpool.Config)
	log     *slog.Logger
}

// WithSchema keeps vouch's tables in the named schema, created if missing,
// instead of the first schema of the connection's search_path (usually
// public). Every connection of the pool gets search_path set to it. A
// schema that exists is used as it is: a role that owns it needs no
// privilege to create schemas in the database.
func WithSchema(name string) Option {
	return func(o *options) error {
		if name == "" {
			return errors.New("pgstore: WithSchema: empty schema name")
		}
		o.schema = name
		return nil
	}
}

// WithQueryTimeout bounds each query of the stores, on top of the
// caller's context; d must be positive. The default is
// DefaultQueryTimeout.
func WithQueryTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("pgstore: WithQueryTimeout: %v is not positive", d)
		}
		o.timeout = d
		return nil
	}
}

// WithPoolConfig lets f adjust the pool's configuration (sizes, lifetimes,
// connection hooks) after it is parsed from the URL and before the pool is
// created. The URL can also set pool sizes: pool_max_conns=8.
func WithPoolConfig(f func(*pgxpool.Config)) Option {
	return func(o *options) error {
		o.pool = f
		return nil
	}
}

// WithLogger logs the migrations Open applies; nil (the default) is
// silent.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		o.log = l
		return nil
	}
}

// Open connects to the database at databaseURL (a postgres:// URL or a
// key=value DSN, as pgx reads them), applies the embedded migrations that
// the database lacks and returns the DB. ctx bounds the connection and the
// migrations, not the DB's later use. A database that cannot be reached
// fails it with an error that says so, naming its address and wrapping
// the network error.
//
// Several processes may Open one database at once: the migrations run
// under a PostgreSQL advisory lock, one process at a time, and each is
// applied once.
func Open(ctx context.Context, databaseURL string, opts ...Option) (*DB, error) {
	o := options{timeout: DefaultQueryTimeout}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, urlError(databaseURL, err)
	}
	if o.schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.schema}.Sanitize()
	}
	if o.pool != nil {
		o.pool(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: failed to create the pool: %w", err)
	}
	if err := connect(ctx, pool, &cfg.ConnConfig.Config); err != nil {
		pool.Close()
		return nil, err
	}
	db := &DB{pool: pool, timeout: o.timeout, batch: sweepBatch}
	if err := db.migrate(ctx, o); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// migrate creates the schema if one is named and applies the migrations.
func (db *DB) migrate(ctx context.Context, o options) error {
	if o.schema != "" {
		if err := db.createSchema(ctx, o.schema); err != nil {
			return fmt.Errorf("pgstore: failed to create schema %s: %w", o.schema, err)
		}
	}
	// One advisory lock per schema, so that processes on one schema take
	// turns and processes on different schemas do not wait for each other.
	// The schema is the one the migrations create their tables in, however
	// it is named (WithSchema, the URL's search_path, or the default).
	var schema *string // NULL when search_path names no schema that exists
	if err := db.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("pgstore: failed to read the current schema: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte("vouch/pgstore\x00"))
	if schema != nil {
		h.Write([]byte(*schema))
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64())), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("pgstore: failed to create the migration lock: %w", err)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool) // closing it leaves the pool open
	defer sqlDB.Close()
	popts := []goose.ProviderOption{
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
		goose.WithTableName(versionTable),
	}
	if o.log != nil {
		popts = append(popts, goose.WithSlog(o.log))
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("pgstore: failed to load the migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, fsys, popts...)
	if err != nil {
		return fmt.Errorf("pgstore: failed to load the migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("pgstore: failed to apply the migrations: %w", err)
	}
	return nil
}

// createSchema creates the schema name unless it exists. CREATE SCHEMA
// IF NOT EXISTS is not enough alone: it demands the CREATE privilege on
// the database even when the schema exists, and a role given a schema
// of its own need not have that privilege.
func (db *DB) createSchema(ctx context.Context, name string) error {
	var exists bool
	// A name is truncated to 63 bytes as an identifier is.
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1::name)`, name).Scan(&exists)
	if err != nil || exists {
		return err
	}
	_, err = db.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{name}.Sanitize())
	// IF NOT EXISTS is not atomic: a process creating the schema at the
	// same time may win with a unique violation, which leaves it made.
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		err = nil
	}
	return err
}

// Close closes the pool, waiting for connections in use to be returned.
func (db *DB) Close() { db.pool.Close() }

// Pool returns the connection pool, for health checks and statistics. The
// DB owns it: do not close it.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// query derives the context of one query: ctx bounded by the query
// timeout. It returns ctx's error if ctx is already done, so that a
// cancelled call does no work.
func (db *DB) query(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, db.timeout)
	return ctx, cancel, nil
}

// DeleteExpired removes, in every table, the rows that no longer matter at
// now: expired receipts, idempotency keys, payment authorizations, the
// outcomes they bought, paid MCP answers, payment ids and escrowed
// payments past their refund deadline, and trial buckets that have
// refilled. It returns how many rows it removed. Each table is swept in
// batches of at most 1,000 rows, each batch one statement under the
// query timeout, until a batch finds fewer: a backlog of any size is
// cleared in one call, where one statement for the whole backlog would
// outlast the timeout, be rolled back and grow. A table whose sweep
// fails does not keep the others from being swept (the batches it
// deleted stay deleted, and count): their errors are joined, and a done
// ctx stops it.
func (db *DB) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	total := 0
	var errs []error
	for _, f := range []func(context.Context, time.Time) (int, error){
		db.Receipts().DeleteExpired,
		db.Idempotency().DeleteExpired,
		db.sweepTrial,
		db.Replay().DeleteExpired,
		db.Outcomes().DeleteExpired,
		db.Answers().DeleteExpired,
		db.Escrow().DeleteExpired,
		db.PaymentIDs().DeleteExpired,
	} {
		n, err := f(ctx, now)
		total += n
		if err != nil {
			if ctx.Err() != nil {
				return total, err
			}
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// deleteExpired deletes the rows of table for which cond holds at now
// ($1), in batches of at most db.batch rows, each its own statement
// under the query timeout, until a batch deletes fewer; it returns how
// many it removed, with the error of the batch that failed, if any; what
// names those rows in its error.
func (db *DB) deleteExpired(ctx context.Context, now time.Time, what, table, cond string) (int, error) {
	// The condition is checked again on each row the batch names, in
	// case another transaction changed the row since it was chosen.
	stmt := `DELETE FROM ` + table + ` WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM ` + table + ` WHERE ` + cond + ` LIMIT $2)) AND ` + cond
	total := 0
	for {
		n, err := db.deleteBatch(ctx, stmt, now)
		total += n
		if err != nil {
			return total, fmt.Errorf("pgstore: deleting expired %s: %w", what, err)
		}
		if n < db.batch {
			return total, nil
		}
	}
}

// deleteBatch runs stmt, one batch of deleteExpired, under the query
// timeout.
func (db *DB) deleteBatch(ctx context.Context, stmt string, now time.Time) (int, error) {
	ctx, cancel, err := db.query(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	tag, err := db.pool.Exec(ctx, stmt, now, db.batch)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// Sweep calls db.DeleteExpired every interval, at the time now returns
// (nil means time.Now), until ctx is done, and then returns ctx's error.
// An error does not stop it; it is passed to onError if that is not nil.
// Run it in its own goroutine, in one process or in each: sweeps of
// several processes do not conflict.
func (db *DB) Sweep(ctx context.Context, every time.Duration, now func() time.Time, onError func(error)) error {
	if every <= 0 {
		return fmt.Errorf("pgstore: sweep interval must be positive, got %v", every)
	}
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if _, err := db.DeleteExpired(ctx, now()); err != nil && onError != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}

// sweepTrial forgets the trial buckets that are full at now: a new bucket
// behaves the same.
func (db *DB) sweepTrial(ctx context.Context, now time.Time) (int, error) {
	return db.deleteExpired(ctx, now, "idle trial buckets", "vouch_trial_limits", "tat <= $1")
}

// urlError says what is wrong in databaseURL, which pgx could not parse
// (err), without quoting it: it may hold a password. pgx's reason follows
// the URL it quotes (its password masked), and is kept.
func urlError(databaseURL string, err error) error {
	const base = "pgstore: the database URL does not parse"
	if scheme, _, ok := strings.Cut(databaseURL, "://"); ok && scheme != "postgres" && scheme != "postgresql" && !strings.ContainsAny(scheme, " =@:/") {
		return fmt.Errorf("%s: its scheme %q is not postgres or postgresql", base, scheme)
	}
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return errors.New(base)
	}
	msg := pe.Error()
	i := strings.LastIndex(msg, "`: ")
	if i < 0 {
		return errors.New(base)
	}
	reason := msg[i+len("`: "):]
	if strings.HasPrefix(reason, "failed to parse as keyword/value (invalid keyword/value)") {
		reason = "it is neither a postgres:// URL nor keyword=value settings"
	}
	return fmt.Errorf("%s: %s", base, reason)
}
