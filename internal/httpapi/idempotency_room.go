package httpapi

import (
	"cmp"
	"container/heap"
	"container/list"
)

// Making room in a MemoryIdempotencyStore's budget for a new entry.

// makeRoom makes room in b for one more entry of caller, of size bytes:
// it drops completed entries of caller when it is at its own bound, and,
// when b is full, those of caller in a pinned budget and otherwise of the
// caller holding the most: the most entries when b holds as many as it
// may, the most bytes when their bytes are what is over, so that a
// caller of a few large answers cannot push out another's many small
// ones, nor the reverse. It reports whether the entry fits; when it does
// not, it drops nothing, so that no answer is lost to a request that is
// refused anyway.
func (s *MemoryIdempotencyStore) makeRoom(b *memBudget, caller string, size int64) bool {
	var dropped dropLog
	if !s.room(b, caller, size, &dropped) {
		s.restore(dropped)
		return false
	}
	return true
}

// room does the work of makeRoom, noting in dropped the entries it drops;
// when it reports false, some may have been dropped all the same.
func (s *MemoryIdempotencyStore) room(b *memBudget, caller string, size int64, dropped *dropLog) bool {
	perCaller := cmp.Or(s.MaxEntriesPerCaller, DefaultIdempotencyMaxEntriesPerCaller)
	limit := cmp.Or(s.MaxEntries, DefaultIdempotencyMaxEntries)
	maxBytes := cmp.Or(s.MaxBytes, DefaultIdempotencyMaxBytes)
	own := b.callers[caller]
	if own != nil && own.entries.Len() >= perCaller && !s.dropOldestCompleted(&own.entries, own.entries.Len()-perCaller+1, dropped) {
		return false
	}
	for b.order.Len() >= limit || b.bytes+size > maxBytes && b.order.Len() > 0 {
		if b.pinned {
			if own = b.callers[caller]; own == nil || !s.dropOldestCompleted(&own.entries, 1, dropped) {
				return false
			}
			continue
		}
		// The oldest completed entry of a caller holding the most; none
		// when all of theirs are in flight.
		drop := s.dropHeaviest
		if b.order.Len() >= limit {
			drop = s.dropLargest
		}
		if !drop(b, dropped) {
			return false
		}
	}
	return true
}

// dropLargest drops the oldest completed entry of a caller of b holding
// the most entries, and reports whether one had such an entry. A caller
// holding fewer keeps its entries even when every entry of those holding
// the most is in flight: it is not the one that filled the budget. The
// caller at the heap's top has one unless every entry it holds is in
// flight, which a caller's own bound keeps rare.
func (s *MemoryIdempotencyStore) dropLargest(b *memBudget, dropped *dropLog) bool {
	if len(b.largest) == 0 {
		return false
	}
	most := b.largest[0].entries.Len()
	for _, c := range b.largest {
		if c.entries.Len() == most && s.dropOldestCompleted(&c.entries, 1, dropped) {
			return true
		}
	}
	return false
}

// dropHeaviest drops the oldest completed entry of a caller of b holding
// the most bytes, and reports whether one had such an entry; as in
// dropLargest, a caller holding fewer bytes keeps its entries.
func (s *MemoryIdempotencyStore) dropHeaviest(b *memBudget, dropped *dropLog) bool {
	var most int64
	for _, c := range b.largest {
		most = max(most, c.bytes)
	}
	for _, c := range b.largest {
		if c.bytes == most && s.dropOldestCompleted(&c.entries, 1, dropped) {
			return true
		}
	}
	return false
}

// dropOldestCompleted drops the n oldest completed entries of l, noting
// them in dropped, and reports whether there were n to drop.
func (s *MemoryIdempotencyStore) dropOldestCompleted(l *list.List, n int, dropped *dropLog) bool {
	for el := l.Front(); el != nil && n > 0; {
		next := el.Next()
		if e := el.Value.(*memEntry); e.resp != nil {
			*dropped = append(*dropped, droppedEntry{e: e, next: entryOf(e.el.Next()), callerNext: entryOf(next)})
			s.remove(e)
			n--
		}
		el = next
	}
	return n <= 0
}

// dropLog lists the entries makeRoom dropped, in the order it dropped
// them.
type dropLog []droppedEntry

// droppedEntry is an entry makeRoom dropped, and the entries that followed
// it in its budget's order and in its caller's list when it was dropped
// (nil when it was the last).
type droppedEntry struct {
	e, next, callerNext *memEntry
}

// entryOf returns the entry el holds, or nil when el is nil.
func entryOf(el *list.Element) *memEntry {
	if el == nil {
		return nil
	}
	return el.Value.(*memEntry)
}

// restore puts back the entries of dropped where they were, the last
// dropped first, so that each entry that followed one is back in place
// (or was never dropped) when that one is put back before it.
func (s *MemoryIdempotencyStore) restore(dropped dropLog) {
	for i := len(dropped) - 1; i >= 0; i-- {
		d := dropped[i]
		e, b := d.e, d.e.budget
		if d.next != nil {
			e.el = b.order.InsertBefore(e, d.next.el)
		} else {
			e.el = b.order.PushBack(e)
		}
		l := b.callers[e.caller]
		if l == nil {
			l = new(callerList)
			b.callers[e.caller] = l
			heap.Push(&b.largest, l)
		}
		if d.callerNext != nil {
			e.callerEl = l.entries.InsertBefore(e, d.callerNext.callerEl)
		} else {
			e.callerEl = l.entries.PushBack(e)
		}
		heap.Fix(&b.largest, l.i)
		l.bytes += e.size
		b.bytes += e.size
		s.entries[e.key] = e
	}
}
