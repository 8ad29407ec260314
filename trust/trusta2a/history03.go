package trusta2a

import (
	"context"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
)

// boundHistory serves version 0.3 as its RequestHandler does, except
// that a message/send's answer holds only as much of its task's history
// as the message's configuration.historyLength asks for, as the SDK's
// tasks/get does (its message/send answers all of it).
type boundHistory struct {
	a2asrv.RequestHandler
}

func (h boundHistory) OnSendMessage(ctx context.Context, params *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	res, err := h.RequestHandler.OnSendMessage(ctx, params)
	if task, ok := res.(*a2a.Task); ok && params.Config != nil {
		res = withHistory(task, params.Config.HistoryLength)
	}
	return res, err
}

// withHistory returns task with only the last n messages of its history:
// task itself when n is nil or its history has no more, or else a copy,
// so that a task shared with the store keeps its history. A negative n,
// which readParams03 refuses, is read as 0.
func withHistory(task *a2a.Task, n *int) *a2a.Task {
	if n == nil || *n >= len(task.History) {
		return task
	}
	t := *task
	t.History = task.History[len(task.History)-max(*n, 0):]
	return &t
}
