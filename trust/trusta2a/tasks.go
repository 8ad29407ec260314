package trusta2a

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/vouchkit/vouch/trust"
)

// DefaultMaxTasks is how many tasks the agent keeps for tasks/get when
// Config.MaxTasks is 0.
const DefaultMaxTasks = 10000

// taskKey names a task of one caller.
type taskKey struct {
	caller string
	id     a2a.TaskID
}

// taskStore keeps each caller's tasks apart, as the JSON the SDK writes
// (a deep copy no later change reaches), and at most max tasks in all:
// the oldest task is forgotten first. It implements a2asrv.TaskStore; the
// caller is trust.CallerFrom of the context, so a task is found only by
// the caller that made it.
type taskStore struct {
	max   int
	mu    sync.Mutex
	tasks map[taskKey][]byte
	order []taskKey // by first save, oldest first
}

func newTaskStore(max int) *taskStore {
	return &taskStore{max: max, tasks: map[taskKey][]byte{}}
}

// Save stores task for the caller of ctx.
func (s *taskStore) Save(ctx context.Context, task *a2a.Task) error {
	raw, err := json.Marshal(task)
	if err != nil {
		return err
	}
	k := taskKey{trust.CallerFrom(ctx), task.ID}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[k]; !ok {
		s.order = append(s.order, k)
		for len(s.order) > s.max {
			delete(s.tasks, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.tasks[k] = raw
	return nil
}

// Get returns the task id of the caller of ctx, or an error wrapping
// a2a.ErrTaskNotFound.
func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	raw, ok := s.tasks[taskKey{trust.CallerFrom(ctx), id}]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no task %q of this caller: unknown, or forgotten: %w", id, a2a.ErrTaskNotFound)
	}
	var task a2a.Task
	if err := json.Unmarshal(raw, &task); err != nil {
		return nil, err
	}
	return &task, nil
}
