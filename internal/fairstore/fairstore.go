// Package fairstore holds values in memory, each until its time, within
// bounds of count and bytes that no one owner can spend for the others.
//
// A [Store] that is full makes room by dropping entries of the owner
// holding the most, never of an owner holding less than the one whose
// entry arrives: one payer's traffic, however heavy, only ever pushes out
// its own entries while it holds more than the others. Entries marked
// spare (a refusal kept for a retry, whose loss costs no one a payment)
// are dropped before any other, and a spare entry never pushes out one
// that is not.
package fairstore

import (
	"container/heap"
	"sync"
	"time"
)

// Entry is a value held under a key.
type Entry[V any] struct {
	// Key names the entry; a Put under a key held replaces it.
	Key string
	// Owner names who the entry belongs to (a payer, say). Entries of
	// the empty owner belong to one owner like any other.
	Owner string
	// Value is what is held.
	Value V
	// Until is when the entry expires.
	Until time.Time
	// Size is what the entry counts against the bytes bound.
	Size int64
	// Spare marks an entry that is dropped before any other.
	Spare bool
}

// Store holds entries in memory. Its zero value is empty and ready to
// use; it is safe for concurrent use and must not be copied after first
// use.
type Store[V any] struct {
	mu     sync.Mutex
	held   map[string]*item[V]
	order  queue[V] // every item, the one expiring first on top
	owners map[string]*owner[V]
	bytes  int64
	puts   uint64 // the Puts that held an entry, to order entries of one time
}

// item is an entry held, with its index in the store's queue and in its
// owner's, and the order of its Put.
type item[V any] struct {
	Entry[V]
	at  [2]int
	put uint64
}

// owner is what one owner holds.
type owner[V any] struct {
	n     int
	bytes int64
	spare queue[V] // its spare items, the one expiring first on top
	kept  queue[V] // its other items, likewise
}

// Put holds e until e.Until in place of what e.Key held, first dropping
// the entries expired at now, within maxEntries entries and maxBytes
// bytes, and reports whether e is held. When e does not fit, entries are
// dropped, the one expiring first each time (of two, the one put first):
// a spare one of the owner holding the most among those holding spare
// entries; when none is held,
// unless e is spare, one of the owner holding the most. The most is
// counted in entries when the store holds maxEntries, in bytes otherwise,
// with e counted in its owner's share. e is not held, and nothing more is
// dropped, when e alone is over a bound, when e is spare and no spare
// entry is left to drop, or when e's owner holds the most and nothing
// more it could drop.
func (s *Store[V]) Put(now time.Time, e Entry[V], maxEntries int, maxBytes int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.held[e.Key]; ok {
		s.drop(old)
	}
	for s.order.Len() > 0 && !now.Before(s.order.top().Until) {
		s.drop(s.order.top())
	}
	if maxEntries < 1 || e.Size > maxBytes {
		return false
	}
	for s.order.Len() >= maxEntries || s.bytes+e.Size > maxBytes {
		v := s.victim(e, s.order.Len() >= maxEntries)
		if v == nil {
			return false
		}
		s.drop(v)
	}
	if s.held == nil {
		s.held = make(map[string]*item[V])
		s.owners = make(map[string]*owner[V])
	}
	o := s.owners[e.Owner]
	if o == nil {
		o = &owner[V]{spare: queue[V]{slot: 1}, kept: queue[V]{slot: 1}}
		s.owners[e.Owner] = o
	}
	s.puts++
	it := &item[V]{Entry: e, put: s.puts}
	heap.Push(&s.order, it)
	heap.Push(o.queue(e.Spare), it)
	o.n++
	o.bytes += e.Size
	s.bytes += e.Size
	s.held[e.Key] = it
	return true
}

// victim returns the item Put drops to make room for e, or nil when e
// must not be held (see Put). byCount weighs owners by their entries,
// else by their bytes.
func (s *Store[V]) victim(e Entry[V], byCount bool) *item[V] {
	weight := func(name string, o *owner[V]) int64 {
		n, b := int64(o.n), o.bytes
		if name == e.Owner {
			n, b = n+1, b+e.Size
		}
		if byCount {
			return n
		}
		return b
	}
	for _, spare := range []bool{true, false} {
		var most *owner[V]
		mostName, mostWeight := "", int64(-1)
		if !spare {
			if e.Spare {
				return nil
			}
			// e's owner competes even when it holds nothing: then e is
			// what it holds most of.
			most, mostName = s.owners[e.Owner], e.Owner
			if most == nil {
				most = &owner[V]{}
			}
			mostWeight = weight(e.Owner, most)
		}
		for name, o := range s.owners {
			q := o.queue(spare)
			if q.Len() == 0 {
				continue
			}
			// Ties go against e's owner, then to the entry expiring first.
			w := weight(name, o)
			if w > mostWeight || w == mostWeight && (name == e.Owner || mostName != e.Owner && q.top().Until.Before(most.queue(spare).top().Until)) {
				most, mostName, mostWeight = o, name, w
			}
		}
		if most != nil {
			if q := most.queue(spare); q.Len() > 0 {
				return q.top()
			}
			return nil // e's owner holds the most and nothing to drop
		}
	}
	return nil
}

// drop forgets it.
func (s *Store[V]) drop(it *item[V]) {
	o := s.owners[it.Owner]
	heap.Remove(&s.order, it.at[0])
	heap.Remove(o.queue(it.Spare), it.at[1])
	o.n--
	o.bytes -= it.Size
	if o.n == 0 {
		delete(s.owners, it.Owner)
	}
	s.bytes -= it.Size
	delete(s.held, it.Key)
}

// Get returns the value held under key, and false when there is none or
// it has expired at now.
func (s *Store[V]) Get(key string, now time.Time) (V, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.held[key]
	if !ok || !now.Before(it.Until) {
		var zero V
		return zero, false
	}
	return it.Value, true
}

// Len returns the number of entries held, expired ones included until the
// next Put.
func (s *Store[V]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

// Bytes returns the bytes held, expired entries included until the next
// Put.
func (s *Store[V]) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// queue returns o's queue of spare items, or of the others.
func (o *owner[V]) queue(spare bool) *queue[V] {
	if spare {
		return &o.spare
	}
	return &o.kept
}

// queue is a heap of items, the one expiring first on top (of two that
// expire together, the one put first), that keeps each item's index in
// it at the item's at[slot].
type queue[V any] struct {
	items []*item[V]
	slot  int
}

func (q *queue[V]) top() *item[V] { return q.items[0] }
func (q *queue[V]) Len() int      { return len(q.items) }
func (q *queue[V]) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	return a.Until.Before(b.Until) || a.Until.Equal(b.Until) && a.put < b.put
}
func (q *queue[V]) Swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.items[i].at[q.slot] = i
	q.items[j].at[q.slot] = j
}
func (q *queue[V]) Push(x any) {
	it := x.(*item[V])
	it.at[q.slot] = len(q.items)
	q.items = append(q.items, it)
}
func (q *queue[V]) Pop() any {
	n := len(q.items) - 1
	it := q.items[n]
	q.items[n] = nil
	q.items = q.items[:n]
	return it
}
