package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// connect opens one connection of pool before anything runs on it, so
// that a database that cannot be reached (a wrong host or port, a server
// that is down) or that refuses the connection (a wrong password, TLS)
// is reported as such, naming its address, and not as the failure of
// whichever query happened to need the connection first.
func connect(ctx context.Context, pool *pgxpool.Pool, cfg *pgconn.Config) error {
	err := pool.Ping(ctx)
	if err == nil {
		return nil
	}
	where := addresses(cfg)
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("pgstore: the database at %s cannot be reached: %w", where, cause(err))
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("pgstore: failed to connect to the database at %s as user %s: %w", where, cfg.User, errors.Unwrap(ce))
	}
	return fmt.Errorf("pgstore: failed to connect to the database at %s: %w", where, err)
}

// cause returns the network error inside err, which says what failed in
// its own words ("dial tcp 127.0.0.1:5433: connect: connection refused",
// "lookup db.invalid: no such host"), or err when there is none.
func cause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns
	}
	return err
}

// addresses lists the addresses cfg connects to, in the order it tries
// them: host:port, or the socket file of a Unix-domain host.
func addresses(cfg *pgconn.Config) string {
	list := []string{address(cfg.Host, cfg.Port)}
	for _, f := range cfg.Fallbacks {
		if a := address(f.Host, f.Port); a != list[len(list)-1] {
			list = append(list, a)
		}
	}
	return strings.Join(list, ", ")
}

func address(host string, port uint16) string {
	p := strconv.Itoa(int(port))
	if strings.HasPrefix(host, "/") {
		return filepath.Join(host, ".s.PGSQL."+p)
	}
	return net.JoinHostPort(host, p)
}
