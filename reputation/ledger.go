package reputation

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/vouchkit/vouch/internal/fairstore"
)

// A Ledger remembers the ballots of the latest calls, each by the caller
// that made it and an id (such as a trace id), up to a bound, so that a
// report on a call ([Ledger.Report]) finds who voted and how, and counts
// once. An id names a call only together with its caller: callers choose
// their trace ids, and one caller's call never answers for another's.
// When full, a Ledger forgets the oldest call of the caller that holds
// the most calls, the caller of the call it remembers counting that call
// (and losing a tie once it holds calls of its own), so that one caller's
// stream of calls forgets its own, never a caller's that holds fewer; a
// caller that holds none is owed room for one. Callers named by an IPv6
// address as the HTTP doors name an anonymous caller ("ip:<address>")
// count as their /64, every address of the prefix as one caller. Remembering a call costs
// O(log n) in the calls held, however many callers hold them. A Ledger is
// safe for concurrent use; the zero Ledger remembers nothing: build one
// with NewLedger.
type Ledger struct {
	mu    sync.Mutex // makes a look and a Put one step
	max   int
	calls fairstore.Store[*ledgerEntry] // by fairstore.Key(caller, id), owned by the caller
}

type ledgerEntry struct {
	call Call

	mu sync.Mutex // held while a report on the call is applied
}

// NewLedger returns a Ledger that remembers up to max calls.
func NewLedger(max int) *Ledger {
	return &Ledger{max: max}
}

// Put remembers the call that caller made under id, in scope, with its
// ballots, replacing what was remembered under caller and id (and with it
// any report on that call): PutCall of a Call with no Tier.
func (l *Ledger) Put(caller, id string, scope Scope, ballots []Ballot) {
	l.PutCall(caller, id, Call{Scope: scope, Ballots: ballots})
}

// PutCall remembers call, made by caller under id, replacing what was
// remembered under caller and id (and with it any report on that call);
// a call replaced keeps its age.
func (l *Ledger) PutCall(caller, id string, call Call) {
	l.put(caller, id, &ledgerEntry{call: call}, true)
}

// Keep is Put, but keeps a call already remembered under caller and id
// (and any report on it). It reports whether it remembered the new one.
func (l *Ledger) Keep(caller, id string, scope Scope, ballots []Ballot) bool {
	return l.KeepCall(caller, id, Call{Scope: scope, Ballots: ballots})
}

// KeepCall is PutCall, but keeps a call already remembered under caller
// and id (and any report on it). It reports whether it remembered the
// new one.
func (l *Ledger) KeepCall(caller, id string, call Call) bool {
	return l.put(caller, id, &ledgerEntry{call: call}, false)
}

func (l *Ledger) put(caller, id string, e *ledgerEntry, replace bool) bool {
	if l.max <= 0 {
		return false
	}
	if e.call.At.IsZero() {
		e.call.At = time.Now()
	}
	k := fairstore.Key(caller, id)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls.Has(k) {
		return replace && l.calls.Swap(k, e)
	}
	// Calls never expire and weigh nothing: the count alone bounds them.
	return l.calls.Put(time.Time{}, fairstore.Entry[*ledgerEntry]{Key: k, Owner: fairstore.OwnerOf(caller, fairstore.IPv6OwnerBits), Value: e}, l.max, math.MaxInt64)
}

// Get returns what is remembered of the call caller made under id.
func (l *Ledger) Get(caller, id string) (scope Scope, ballots []Ballot, ok bool) {
	e := l.entry(caller, id)
	if e == nil {
		return scope, nil, false
	}
	return e.call.Scope, e.call.Ballots, true
}

// Call returns what is remembered of the call caller made under id.
func (l *Ledger) Call(caller, id string) (Call, bool) {
	e := l.entry(caller, id)
	if e == nil {
		return Call{}, false
	}
	return e.call, true
}

func (l *Ledger) entry(caller, id string) *ledgerEntry {
	e, _ := l.calls.Get(fairstore.Key(caller, id), time.Time{})
	return e
}

// Report teaches b that the outcome of the call caller made under id was
// right (or wrong), as [Book.Feedback] does, and when the call names a
// calibration map (Call.Tier), as one outcome at its score in that map
// (see [Calibration]), once per call: a report
// that repeats the one applied before adds nothing, and one that says
// the opposite replaces it. Replacing applies only the change: for each
// ballot, the evidence of the new report less that of the first (a
// backer's FeedbackWeight moves from Right to Wrong, say), so that a
// record not full since reads exactly as if only the new report had been
// made. A record that has forgotten since (see the package doc) holds
// less of the first report than was added; the change is applied all the
// same, a count never falling below zero, so a session's record never
// moves by more than FeedbackWeight per call, however often its outcome
// is reported.
//
// What was reported is kept in b's store beside the evidence, in the
// same batch (a record of the panel under the operation "reported
// calls", named by caller, by the call's ID or else id, and by the time
// the call was made, Call.At to the millisecond), and read
// there before each report, so that a call the Ledger
// forgot and remembers again, as a report by receipt rebuilds it, counts
// its report once, and so does a call that several servers sharing b's
// store remember: a report counts once whatever the Ledger still holds.
// A later call that a caller made under the same id, which replaces the
// first in the Ledger, is reported afresh.
// When b's store is a [ConditionalStore], the report is applied only if
// what was reported is still what was read (AddIf), and read again
// otherwise, so that reports on one call made at once on several servers
// count once too; with another store, only the reports this Ledger takes
// are kept apart.
//
// What was reported on a call is kept for b's report window after the
// call was made (Options.ReportWindow, 400 days by default): ok is false,
// and nothing is learned, when the Ledger remembers no call of caller's
// under id, or one made longer ago. Over a store that is a
// [PanelDeleter], Report forgets, about once a week, what was reported on
// the calls made before the window and one week more. On an error of b's
// store nothing is recorded as reported, and the report may be made
// again.
func (l *Ledger) Report(ctx context.Context, b *Book, caller, id string, right bool) (ok bool, err error) {
	e := l.entry(caller, id)
	if e == nil {
		return false, nil
	}
	now := time.Now()
	if !b.reportable(e.call, now) {
		return false, nil
	}
	if err := e.call.Scope.check(); err != nil {
		return true, err
	}
	if err := checkBallots(e.call.Ballots); err != nil {
		return true, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := b.sweepReports(ctx, now); err != nil {
		return true, err
	}
	mark, former := reportKeys(caller, id, e.call)
	cs, conditional := b.store.(ConditionalStore)
	for range reportTries {
		recs, err := b.store.Load(ctx, []Key{mark, former})
		if err != nil {
			return true, err
		}
		key, m := mark, recs[0]
		if m == (Record{}) && recs[1] != (Record{}) {
			// Reported by a former version, which kept it under a name
			// without the call's time: the report stays there.
			key, m = former, recs[1]
		}
		reported, wasRight := m.Right > 0 || m.Wrong > 0, m.Right > 0
		if reported && wasRight == right {
			return true, nil
		}
		// The first report is withdrawn before the new one is added, so
		// that a full record moves evidence without forgetting any; the
		// mark moves with them, in the same batch.
		var deltas []Delta
		if reported {
			deltas = b.reportDeltas(e.call, wasRight, -1)
		}
		deltas = append(deltas, b.reportDeltas(e.call, right, 1)...)
		d := Record{Right: 1, Wrong: -1}
		if !right {
			d = Record{Right: -1, Wrong: 1}
		}
		deltas = append(deltas, Delta{Key: key, Delta: d})
		if !conditional {
			return true, b.store.Add(ctx, b.opts.Horizon, deltas)
		}
		applied, err := cs.AddIf(ctx, b.opts.Horizon, key, m, deltas)
		if err != nil || applied {
			return true, err
		}
		// Another server reported on the call meanwhile: read it again.
	}
	return true, fmt.Errorf("reputation: the report on call %q changed %d times while it was made; make it again", id, reportTries)
}

// reportTries bounds the rounds of Report on a ConditionalStore: each
// round lost is a report another server applied.
const reportTries = 16
