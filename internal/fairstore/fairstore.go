// Package fairstore holds values in memory, each until its time, within
// bounds of count and bytes that no one owner can spend for the others.
//
// A [Store] that is full makes room by dropping entries of the owner
// holding the most, never of an owner holding less than the one whose
// entry arrives: one payer's traffic, however heavy, pushes out another's
// entries only once it holds as much as that other.
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
}

// Store holds entries in memory. Its zero value is empty and ready to
// use; it is safe for concurrent use and must not be copied after first
// use. A Put costs O(log n) for each entry it holds or drops.
type Store[V any] struct {
	mu     sync.Mutex
	held   map[string]*item[V]
	order  queue[V] // every item, the one expiring first on top
	owners map[string]*owner[V]
	ranks  [2]rank[V] // the owners, holding the most entries, the most bytes on top
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
	name  string
	items queue[V] // its items, the one expiring first on top
	bytes int64
	at    [2]int // index in the store's ranks
}

// weight is what o holds, counted in entries (by 0) or bytes (by 1).
func (o *owner[V]) weight(by int) int64 {
	if by == byEntries {
		return int64(o.items.Len())
	}
	return o.bytes
}

// The two ways of counting what an owner holds, as indexes of the ranks.
const (
	byEntries = 0
	byBytes   = 1
)

// Put holds e until e.Until in place of what e.Key held, first dropping
// the entries expired at now, within maxEntries entries and maxBytes
// bytes, and reports whether e is held. When e does not fit, entries of
// the owner holding the most are dropped, the one expiring first each
// time (of two, the one put first): the most counted in entries when the
// store holds maxEntries, in bytes otherwise, with e counted in its
// owner's share, and ties going against e's owner. e is not held, and
// nothing more is dropped, when e alone is over a bound, or when e's
// owner holds the most and nothing more it could drop.
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
		by := byBytes
		if s.order.Len() >= maxEntries {
			by = byEntries
		}
		most := s.ranks[by].owners[0]
		if own := s.owners[e.Owner]; own != most && s.outweighs(e, by, most) {
			most = own
		}
		if most == nil {
			return false // e's owner holds the most and nothing to drop
		}
		s.drop(most.items.top())
	}
	if s.held == nil {
		s.held = make(map[string]*item[V])
		s.owners = make(map[string]*owner[V])
		s.ranks[byBytes].by = byBytes
	}
	o := s.owners[e.Owner]
	if o == nil {
		o = &owner[V]{name: e.Owner, items: queue[V]{slot: 1}}
		s.owners[e.Owner] = o
		heap.Push(&s.ranks[byEntries], o)
		heap.Push(&s.ranks[byBytes], o)
	}
	s.puts++
	it := &item[V]{Entry: e, put: s.puts}
	heap.Push(&s.order, it)
	heap.Push(&o.items, it)
	s.resize(o, e.Size)
	s.held[e.Key] = it
	return true
}

// outweighs reports whether e's owner, with e, holds at least as much,
// counted by, as most.
func (s *Store[V]) outweighs(e Entry[V], by int, most *owner[V]) bool {
	var w int64
	if own := s.owners[e.Owner]; own != nil {
		w = own.weight(by)
	}
	if by == byEntries {
		w++
	} else {
		w += e.Size
	}
	return w >= most.weight(by)
}

// resize counts grow more bytes (or fewer, when negative) for o, whose
// items have changed, and puts o back in its ranks.
func (s *Store[V]) resize(o *owner[V], grow int64) {
	o.bytes += grow
	s.bytes += grow
	heap.Fix(&s.ranks[byEntries], o.at[byEntries])
	heap.Fix(&s.ranks[byBytes], o.at[byBytes])
}

// drop forgets it.
func (s *Store[V]) drop(it *item[V]) {
	o := s.owners[it.Owner]
	heap.Remove(&s.order, it.at[0])
	heap.Remove(&o.items, it.at[1])
	delete(s.held, it.Key)
	if o.items.Len() > 0 {
		s.resize(o, -it.Size)
		return
	}
	heap.Remove(&s.ranks[byEntries], o.at[byEntries])
	heap.Remove(&s.ranks[byBytes], o.at[byBytes])
	delete(s.owners, it.Owner)
	s.bytes -= it.Size
}

// Delete drops the entry held under key, if any.
func (s *Store[V]) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.held[key]; ok {
		s.drop(it)
	}
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

// rank is a heap of owners, the one holding the most, counted by, on
// top, that keeps each owner's index in it at the owner's at[by].
type rank[V any] struct {
	owners []*owner[V]
	by     int
}

func (r *rank[V]) Len() int { return len(r.owners) }
func (r *rank[V]) Less(i, j int) bool {
	return r.owners[i].weight(r.by) > r.owners[j].weight(r.by)
}
func (r *rank[V]) Swap(i, j int) {
	r.owners[i], r.owners[j] = r.owners[j], r.owners[i]
	r.owners[i].at[r.by] = i
	r.owners[j].at[r.by] = j
}
func (r *rank[V]) Push(x any) {
	o := x.(*owner[V])
	o.at[r.by] = len(r.owners)
	r.owners = append(r.owners, o)
}
func (r *rank[V]) Pop() any {
	n := len(r.owners) - 1
	o := r.owners[n]
	r.owners[n] = nil
	r.owners = r.owners[:n]
	return o
}
