package reputation

import "sync"

// A Ledger remembers the ballots of the latest calls by id (such as a
// trace id), up to a bound, so that a host's later report on a call
// (Book.Feedback) finds who voted and how. When full, it forgets the
// oldest call first. A Ledger is safe for concurrent use; the zero
// Ledger remembers nothing: build one with NewLedger.
type Ledger struct {
	mu    sync.Mutex
	max   int
	order []string // ids, the oldest at next once full
	next  int
	calls map[string]Call
}

// NewLedger returns a Ledger that remembers up to max calls.
func NewLedger(max int) *Ledger {
	return &Ledger{max: max, calls: make(map[string]Call)}
}

// Put remembers the call id, in scope, with its ballots, replacing what
// was remembered under id: PutCall with a Call of no Tier.
func (l *Ledger) Put(id string, scope Scope, ballots []Ballot) {
	l.PutCall(id, Call{Scope: scope, Ballots: ballots})
}

// PutCall remembers call under id, replacing what was remembered under
// id.
func (l *Ledger) PutCall(id string, call Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max <= 0 {
		return
	}
	if _, seen := l.calls[id]; !seen {
		if len(l.order) < l.max {
			l.order = append(l.order, id)
		} else {
			delete(l.calls, l.order[l.next])
			l.order[l.next] = id
			l.next = (l.next + 1) % len(l.order)
		}
	}
	l.calls[id] = call
}

// Get returns what is remembered of call id.
func (l *Ledger) Get(id string) (scope Scope, ballots []Ballot, ok bool) {
	c, ok := l.Call(id)
	return c.Scope, c.Ballots, ok
}

// Call returns what is remembered of call id.
func (l *Ledger) Call(id string) (Call, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.calls[id]
	return c, ok
}
