// Package fairstore holds values in memory, each until its time, within
// bounds of count and bytes that no one owner can spend for the others.
//
// A [Store] that is full makes room by dropping entries of the owner
// holding the most, never of an owner holding less than the one whose
// entry arrives: one payer's traffic, however heavy, pushes out another's
// entries only once it holds as much as that other. An owner that holds
// nothing is owed room for one entry.
package fairstore

import (
	"container/heap"
	"strconv"
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
	// Until is when the entry expires; the zero time, never. When room
	// is made, an entry that never expires goes after every entry that
	// does.
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
	order  heapOf[*item[V]] // every item, the one expiring first on top
	owners map[string]*owner[V]
	ranks  [2]heapOf[*owner[V]] // the owners, holding the most entries, the most bytes on top
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
	items heapOf[*item[V]] // its items, the one expiring first on top
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
// bytes, and reports whether e is held: false only when e alone is over
// a bound, and then nothing more is dropped. When e does not fit,
// entries of the owner holding the most are dropped, the one expiring
// first each time (of two, the one put first): the most counted in
// entries when the store holds maxEntries, in bytes otherwise. e's owner
// counts e in its share, and a tie goes against it, once it holds
// entries of its own; an owner that holds none is owed room for one, so
// its entry pushes out those of the owner holding the most.
func (s *Store[V]) Put(now time.Time, e Entry[V], maxEntries int, maxBytes int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.held[e.Key]; ok {
		s.drop(old)
	}
	s.dropExpired(now)
	if maxEntries < 1 || e.Size > maxBytes {
		return false
	}
	for s.order.Len() >= maxEntries || s.bytes+e.Size > maxBytes {
		by := byBytes
		if s.order.Len() >= maxEntries {
			by = byEntries
		}
		most := s.ranks[by].top()
		if own := s.owners[e.Owner]; own != nil && own != most && outweighs(own, e, by, most) {
			most = own
		}
		s.drop(most.items.top())
	}
	if s.held == nil {
		s.held = make(map[string]*item[V])
		s.owners = make(map[string]*owner[V])
		s.order = queue[V](0)
		s.ranks = [2]heapOf[*owner[V]]{rank[V](byEntries), rank[V](byBytes)}
	}
	o := s.owners[e.Owner]
	if o == nil {
		o = &owner[V]{items: queue[V](1)}
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

// outweighs reports whether own, the owner of e, holds with e at least
// as much, counted by, as most.
func outweighs[V any](own *owner[V], e Entry[V], by int, most *owner[V]) bool {
	w := own.weight(by)
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

// dropExpired drops the entries expired at now and returns how many.
func (s *Store[V]) dropExpired(now time.Time) int {
	n := 0
	for ; s.order.Len() > 0 && expired(s.order.top().Until, now); n++ {
		s.drop(s.order.top())
	}
	return n
}

// DropExpired drops the entries expired at now and returns how many.
func (s *Store[V]) DropExpired(now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropExpired(now)
}

// Swap replaces the value held under key, keeping the entry's owner,
// time, size and place, and reports whether an entry was held there,
// expired or not.
func (s *Store[V]) Swap(key string, v V) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.held[key]
	if ok {
		it.Value = v
	}
	return ok
}

// Key returns a key naming name of owner, distinct for every pair: the
// length of owner, owner, then name.
func Key(owner, name string) string {
	return strconv.Itoa(len(owner)) + ":" + owner + name
}

// Has reports whether an entry is held under key, expired or not.
func (s *Store[V]) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[key]
	return ok
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
	if !ok || expired(it.Until, now) {
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

// heapOf is a heap of elements ordered by less, that keeps each
// element's index in it at *at(x), for heap.Fix and heap.Remove.
type heapOf[T any] struct {
	xs   []T
	less func(a, b T) bool
	at   func(T) *int
}

func (h *heapOf[T]) top() T             { return h.xs[0] }
func (h *heapOf[T]) Len() int           { return len(h.xs) }
func (h *heapOf[T]) Less(i, j int) bool { return h.less(h.xs[i], h.xs[j]) }
func (h *heapOf[T]) Swap(i, j int) {
	h.xs[i], h.xs[j] = h.xs[j], h.xs[i]
	*h.at(h.xs[i]) = i
	*h.at(h.xs[j]) = j
}
func (h *heapOf[T]) Push(x any) {
	t := x.(T)
	*h.at(t) = len(h.xs)
	h.xs = append(h.xs, t)
}
func (h *heapOf[T]) Pop() any {
	n := len(h.xs) - 1
	t := h.xs[n]
	var zero T
	h.xs[n] = zero
	h.xs = h.xs[:n]
	return t
}

// expired reports whether an entry held until until has expired at now;
// one held until the zero time never does.
func expired(until, now time.Time) bool {
	return !until.IsZero() && !now.Before(until)
}

// queue returns a heap of items, the one expiring first on top (of two
// that expire together, or never, the one put first), that keeps each
// item's index in it at the item's at[slot].
func queue[V any](slot int) heapOf[*item[V]] {
	return heapOf[*item[V]]{
		less: func(a, b *item[V]) bool {
			if a.Until.IsZero() != b.Until.IsZero() {
				return b.Until.IsZero()
			}
			return a.Until.Before(b.Until) || a.Until.Equal(b.Until) && a.put < b.put
		},
		at: func(it *item[V]) *int { return &it.at[slot] },
	}
}

// rank returns a heap of owners, the one holding the most, counted by,
// on top, that keeps each owner's index in it at the owner's at[by].
func rank[V any](by int) heapOf[*owner[V]] {
	return heapOf[*owner[V]]{
		less: func(a, b *owner[V]) bool { return a.weight(by) > b.weight(by) },
		at:   func(o *owner[V]) *int { return &o.at[by] },
	}
}
