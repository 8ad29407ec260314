package trusta2a

import (
	"container/heap"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/trust"
)

// Bounds of the tasks the agent keeps for tasks/get, when the fields of
// Config that name them are 0.
const (
	// DefaultMaxTasks bounds the tasks kept, all callers together.
	DefaultMaxTasks = 10000
	// DefaultMaxTasksPerCaller bounds the tasks kept for one caller.
	DefaultMaxTasksPerCaller = 1000
	// DefaultMaxTaskBytes bounds the bytes of the tasks kept, all
	// callers together.
	DefaultMaxTaskBytes = 32 << 20
)

// taskOverhead is about what a kept task costs beyond its JSON, its
// caller and its id: its list element, its map slot and their headers.
const taskOverhead = 200

// taskKey names a task of one caller.
type taskKey struct {
	caller string
	id     a2a.TaskID
}

// taskStore keeps each caller's tasks apart, as the JSON the SDK writes
// (a deep copy no later change reaches), bounded in tasks (max), tasks
// per caller (perCaller) and bytes (maxBytes). A caller at its own bound
// forgets its own oldest task; when the store is full, the oldest task of
// the caller holding the most is forgotten (the most tasks when there are
// too many, the most bytes when they take too much), so one caller's
// calls evict another's tasks only when that caller holds as much or
// more; a task alone larger than all another caller holds stays beyond
// maxBytes until the next save. It
// implements a2asrv.TaskStore; the caller is trust.CallerFrom of the
// context, so a task is found only by the caller that made it. The bounds
// count by owner (fairstore.OwnerOf): an anonymous caller named by an
// IPv6 address counts with every address of its /64, so that a machine
// taking a new address for each call forgets its own tasks, never
// another caller's.
type taskStore struct {
	max, perCaller int
	maxBytes       int64

	mu      sync.Mutex
	tasks   map[taskKey]*list.Element // of *keptTask
	callers map[string]*callerTasks   // by owner
	byCount callerRank                // the caller holding the most tasks first
	byBytes callerRank                // the caller holding the most bytes first
	bytes   int64
	running runningTasks
}

// keptTask is a task kept for tasks/get.
type keptTask struct {
	key  taskKey
	raw  []byte
	size int64
}

// callerTasks holds the tasks of one owner, oldest first.
type callerTasks struct {
	owner string
	tasks list.List // of *keptTask
	bytes int64
	at    [2]int // index in byCount and byBytes
}

// callerRank orders callers by the tasks they hold (rank 0) or their
// bytes (rank 1), the most first, so that finding the caller holding the
// most costs nothing and keeping the order costs O(log callers) per task
// added or removed (container/heap).
type callerRank struct {
	rank    int
	callers []*callerTasks
}

func (r *callerRank) Len() int { return len(r.callers) }
func (r *callerRank) Less(i, j int) bool {
	a, b := r.callers[i], r.callers[j]
	if r.rank == 0 {
		return a.tasks.Len() > b.tasks.Len()
	}
	return a.bytes > b.bytes
}
func (r *callerRank) Swap(i, j int) {
	r.callers[i], r.callers[j] = r.callers[j], r.callers[i]
	r.callers[i].at[r.rank], r.callers[j].at[r.rank] = i, j
}
func (r *callerRank) Push(x any) {
	c := x.(*callerTasks)
	c.at[r.rank] = len(r.callers)
	r.callers = append(r.callers, c)
}
func (r *callerRank) Pop() any {
	c := r.callers[len(r.callers)-1]
	r.callers = r.callers[:len(r.callers)-1]
	return c
}

func newTaskStore(max, perCaller int, maxBytes int64) *taskStore {
	return &taskStore{max: max, perCaller: perCaller, maxBytes: maxBytes,
		tasks: map[taskKey]*list.Element{}, callers: map[string]*callerTasks{},
		byCount: callerRank{rank: 0}, byBytes: callerRank{rank: 1},
		running: runningTasks{tasks: map[taskKey]*run{}, byOwner: map[string]int{}}}
}

// Save stores task for the caller of ctx. A task whose call is running
// (see start) is written by that call alone, when it ends: saving it
// does nothing.
func (s *taskStore) Save(ctx context.Context, task *a2a.Task) error {
	raw, err := json.Marshal(task)
	if err != nil {
		return err
	}
	k := taskKey{trust.CallerFrom(ctx), task.ID}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.running.tasks[k]; !ok {
		s.keep(k, raw)
	}
	return nil
}

// keep keeps raw, the JSON of task k, within the store's bounds; s.mu is
// held.
func (s *taskStore) keep(k taskKey, raw []byte) {
	owner := fairstore.OwnerOf(k.caller, fairstore.IPv6OwnerBits)
	size := int64(len(raw)+len(k.caller)+len(k.id)) + taskOverhead
	c := s.callers[owner]
	if el, ok := s.tasks[k]; ok { // a task saved again keeps its age
		kt := el.Value.(*keptTask)
		s.resize(c, size-kt.size)
		kt.raw, kt.size = raw, size
		s.makeRoom(c, k)
		return
	}
	if c == nil {
		c = &callerTasks{owner: owner}
		s.callers[owner] = c
		heap.Push(&s.byCount, c)
		heap.Push(&s.byBytes, c)
	}
	s.tasks[k] = c.tasks.PushBack(&keptTask{key: k, raw: raw, size: size})
	s.resize(c, size)
	s.makeRoom(c, k)
}

// resize counts grow more bytes (or fewer, when negative) for c, whose
// tasks have changed, and puts c back in its ranks.
func (s *taskStore) resize(c *callerTasks, grow int64) {
	c.bytes += grow
	s.bytes += grow
	heap.Fix(&s.byCount, c.at[0])
	heap.Fix(&s.byBytes, c.at[1])
}

// makeRoom forgets tasks until the store is within its bounds, never the
// task k just saved by own: the oldest of own while it is beyond its
// bound, then the oldest of the owner holding the most. When that is own
// holding k alone, another owner's task is forgotten only if that owner
// holds as many (tasks, or bytes) as own: otherwise the store stays
// beyond maxBytes by k alone, which the next save forgets first. (Beyond
// max it never stays: another owner holds at least one task.)
func (s *taskStore) makeRoom(own *callerTasks, k taskKey) {
	for own.tasks.Len() > s.perCaller {
		s.forgetOldest(own, k)
	}
	for len(s.tasks) > 1 && (len(s.tasks) > s.max || s.bytes > s.maxBytes) {
		r := &s.byBytes
		if len(s.tasks) > s.max {
			r = &s.byCount
		}
		c := r.callers[0]
		if c == own && own.tasks.Len() == 1 { // the next in r, if it holds as much as own
			c = r.callers[1]
			if len(r.callers) > 2 && r.Less(2, 1) {
				c = r.callers[2]
			}
			if r == &s.byBytes && c.bytes < own.bytes {
				return
			}
		}
		s.forgetOldest(c, k)
	}
}

// forgetOldest forgets the oldest task of c other than k; c holds one.
func (s *taskStore) forgetOldest(c *callerTasks, k taskKey) {
	el := c.tasks.Front()
	if el.Value.(*keptTask).key == k {
		el = el.Next()
	}
	kt := c.tasks.Remove(el).(*keptTask)
	delete(s.tasks, kt.key)
	if c.tasks.Len() > 0 {
		s.resize(c, -kt.size)
		return
	}
	delete(s.callers, c.owner)
	heap.Remove(&s.byCount, c.at[0])
	heap.Remove(&s.byBytes, c.at[1])
	s.bytes -= kt.size
}

// Get returns the task id of the caller of ctx, running or kept, or an
// error wrapping a2a.ErrTaskNotFound.
func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	k := taskKey{trust.CallerFrom(ctx), id}
	s.mu.Lock()
	var raw []byte
	if r, ok := s.running.tasks[k]; ok {
		raw = r.raw
	} else if el, ok := s.tasks[k]; ok {
		raw = el.Value.(*keptTask).raw
	}
	s.mu.Unlock()
	if raw == nil {
		return nil, fmt.Errorf("no task %q of this caller: unknown, or forgotten: %w", id, a2a.ErrTaskNotFound)
	}
	return decodeTask(raw)
}

// list returns the tasks of the caller of ctx, running and kept, the
// most recently updated first (by their status's timestamp), in the
// order of their listKeys.
func (s *taskStore) list(ctx context.Context) []*a2a.Task {
	s.mu.Lock()
	var raws [][]byte
	caller := trust.CallerFrom(ctx)
	for k, r := range s.running.tasks {
		if k.caller == caller {
			raws = append(raws, r.raw)
		}
	}
	if c := s.callers[fairstore.OwnerOf(caller, fairstore.IPv6OwnerBits)]; c != nil {
		for el := c.tasks.Back(); el != nil; el = el.Prev() {
			if kt := el.Value.(*keptTask); kt.key.caller == caller {
				raws = append(raws, kt.raw)
			}
		}
	}
	s.mu.Unlock()
	tasks := make([]*a2a.Task, 0, len(raws))
	for _, raw := range raws {
		if task, err := decodeTask(raw); err == nil { // the JSON json.Marshal wrote
			tasks = append(tasks, task)
		}
	}
	slices.SortFunc(tasks, func(a, b *a2a.Task) int { return listKeyOf(a).compare(listKeyOf(b)) })
	return tasks
}

// listKey is where a task stands in the order list returns: the most
// recently updated first, and those updated at the same time by id.
type listKey struct {
	updated time.Time // the time of the task's status; zero when it has none
	id      a2a.TaskID
}

// listKeyOf returns the key of task.
func listKeyOf(task *a2a.Task) listKey {
	k := listKey{id: task.ID}
	if ts := task.Status.Timestamp; ts != nil {
		k.updated = *ts
	}
	return k
}

// compare returns -1 when k comes before o in list's order, +1 when it
// comes after, and 0 when they are the same key.
func (k listKey) compare(o listKey) int {
	if c := o.updated.Compare(k.updated); c != 0 {
		return c
	}
	return strings.Compare(string(k.id), string(o.id))
}
