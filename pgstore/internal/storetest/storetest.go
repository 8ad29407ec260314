// Package storetest holds the conformance suites of the stores that
// servers share: router.IdempotencyStore, x402.ReplayStore and the trial
// rate limiter. Each suite runs alike against the in-process
// implementation and against PostgreSQL.
//
// A suite is given two handles on one empty store: the same value twice
// for a store in process memory, two connection pools on one database for
// a shared one. Every property is checked across the two handles, as two
// servers would see it.
package storetest

import "time"

// base is the instant the suites treat as now.
func base() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
