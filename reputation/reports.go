package reputation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// DefaultReportWindow is how long after a call a report on it counts when
// Options.ReportWindow is zero: 400 days, longer than the 90 days a
// production receipt is kept at most (receipt.Production), so that a call
// can be reported by its receipt for as long as the receipt is kept.
const DefaultReportWindow = 400 * 24 * time.Hour

// reportOperation is the operation of the panel's records that keep what
// was last reported on each call (see reportKey). It holds a space, which
// no operation's name does.
const reportOperation = "reported calls"

// reportWeek is the span of calls whose reports are forgotten together.
const reportWeek = 7 * 24 * time.Hour

// A PanelDeleter is a [Store] that can delete the panel's records of one
// operation whose kinds sort before a bound, at once: what a [Book] needs
// to forget what was reported on calls older than its report window
// (Options.ReportWindow), which no report can reach again. [Memory],
// boltstore.Store and pgstore's ReputationStore are PanelDeleters; over
// another Store, what was reported on each call is kept for good.
type PanelDeleter interface {
	Store
	// DeletePanel deletes every record of the panel (PanelSession) under
	// operation whose kind sorts before the kind before, byte by byte,
	// atomically, and returns how many it deleted. It returns an error
	// wrapping ErrInvalid for an operation or a bound CheckPanelDelete
	// refuses (an empty operation, a bound that is not UTF-8 or holds a
	// NUL byte), deleting nothing, and ctx's error when ctx is done
	// before it writes.
	DeletePanel(ctx context.Context, operation, before string) (int, error)
}

// CheckPanelDelete reports what a PanelDeleter's DeletePanel refuses, as
// an error wrapping ErrInvalid: an operation CheckPanelOperation refuses,
// or a bound before that is not UTF-8 or holds a NUL byte, as no kind
// does (see [Key]) and as not every Store can compare (PostgreSQL's text
// holds neither).
func CheckPanelDelete(operation, before string) error {
	if err := CheckPanelOperation(operation); err != nil {
		return err
	}
	if !utf8NoNUL(before) {
		return fmt.Errorf("%w: bound %q is not UTF-8 without NUL bytes", ErrInvalid, before)
	}
	return nil
}

// CheckPanelOperation reports an empty operation, or one no key could
// hold (see [Key]), as an error wrapping ErrInvalid: the operations a
// PanelDeleter refuses (CheckPanelDelete checks its bound as well).
func CheckPanelOperation(operation string) error {
	if operation == "" {
		return fmt.Errorf("%w: the panel's records of no operation", ErrInvalid)
	}
	return checkName("operation", operation)
}

// reportKeys returns the record of the panel in which b's store keeps
// what was last reported on the call caller made under id (Right 1 or
// Wrong 1), so that a report counts once whatever the Ledger still
// remembers, and former, the record a former version kept it in. The
// call is named by its caller, id (c.ID when set, the id it was made
// under), the time it was made to the millisecond (c.At), scope and the
// voters its outcome counts, which a call rebuilt from its receipt names
// alike: a check's ballot (Ballot.Check), which a receipt leaves out,
// does not name it. The time tells apart two calls a caller made under
// one id, the later replacing the first in the Ledger, though the same
// sessions voted alike in both; former, named without it, does not.
// Each kind begins with the week of the call (weekKind), so that the
// reports on the calls of a week are forgotten together
// (Book.sweepReports).
func reportKeys(caller, id string, c Call) (mark, former Key) {
	if c.ID != "" {
		id = c.ID
	}
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q", caller, id, c.Scope.Operation, c.Scope.Kind)
	for _, bl := range c.Ballots {
		if !bl.Check {
			fmt.Fprintf(h, " %d:%t", bl.Session, bl.Backed)
		}
	}
	week := weekKind(weekOf(c.At)) + " "
	former = Key{Session: PanelSession, Operation: reportOperation, Kind: week + hex.EncodeToString(h.Sum(nil)[:16])}
	fmt.Fprintf(h, " at %d", c.At.UnixMilli())
	mark = Key{Session: PanelSession, Operation: reportOperation, Kind: week + hex.EncodeToString(h.Sum(nil)[:16])}
	return mark, former
}

// weekOf returns the week of t counted from the Unix epoch, never below 0.
func weekOf(t time.Time) int64 {
	return max(t.Unix()/int64(reportWeek/time.Second), 0)
}

// weekKind names week w so that weeks sort as their names do.
func weekKind(w int64) string { return fmt.Sprintf("w%08d", w) }

// reportable reports whether a report on call, made at now, counts: the
// call was made within the report window.
func (b *Book) reportable(call Call, now time.Time) bool {
	return !call.At.Before(now.Add(-b.opts.ReportWindow))
}

// sweepReports forgets, when b's store is a PanelDeleter, what was
// reported on the calls made in the weeks before the report window and
// one week more (for clocks of servers sharing the store that differ),
// at most once a week: no report on those calls counts any more.
func (b *Book) sweepReports(ctx context.Context, now time.Time) error {
	d, ok := b.store.(PanelDeleter)
	if !ok {
		return nil
	}
	bound := weekOf(now.Add(-b.opts.ReportWindow)) - 1
	last := b.swept.Load()
	if bound <= last || !b.swept.CompareAndSwap(last, bound) {
		return nil // swept, or being swept
	}
	if _, err := d.DeletePanel(ctx, reportOperation, weekKind(bound)); err != nil {
		b.swept.CompareAndSwap(bound, last) // the next report sweeps again
		return fmt.Errorf("reputation: forgetting the reports on calls before week %d: %w", bound, err)
	}
	return nil
}
