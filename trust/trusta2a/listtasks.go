package trusta2a

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// listTasks answers ListTasks: the caller's tasks, the most recently
// updated first (those updated at once by id), a page at a time.
//
// The page token marks where the page before ended: the status
// timestamp its last task had then, and that task's id (see
// [pageToken]). The next page holds the tasks that match after that
// mark, whatever became of the task since: one that ended, or left the
// filter, neither breaks the paging nor moves the tasks after it. A task
// that was not updated between two pages is served once; one updated
// meanwhile moves before the mark, to be read by a later listing (with
// statusTimestampAfter, say), not again by this one.
func (s *v1Server) listTasks(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	var req v1ListTasksRequest
	if err := decodeStrict("", params, &req); err != nil {
		return nil, invalidParams(violationOf("", err))
	}
	if v := noTenant(req.Tenant); v != nil {
		return nil, invalidParams(v)
	}
	size := int32(50)
	if req.PageSize != nil {
		if size = *req.PageSize; size < 1 || size > 100 {
			return nil, invalidParams(&fieldViolation{Field: "pageSize", Description: fmt.Sprintf("is %d; allowed: 1 to 100", size)})
		}
	}
	if v := historyLength("historyLength", req.HistoryLength); v != nil {
		return nil, invalidParams(v)
	}
	var after time.Time
	if req.StatusTimestampAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, req.StatusTimestampAfter)
		if err != nil {
			return nil, invalidParams(&fieldViolation{Field: "statusTimestampAfter", Description: "must be an RFC 3339 timestamp, such as 2026-11-28T10:00:00Z"})
		}
		after = t
	}
	status, err := enumName("status", req.Status, append([]string{"TASK_STATE_UNSPECIFIED"}, stateNames()...))
	if err != nil {
		return nil, invalidParams(violationOf("", err))
	}
	if status != "" && status != "TASK_STATE_UNSPECIFIED" && !slices.Contains(stateNames(), status) {
		return nil, invalidParams(&fieldViolation{Field: "status", Description: fmt.Sprintf("unknown state %q; allowed: %s", status, strings.Join(stateNames(), ", "))})
	}
	var mark listKey
	if req.PageToken != "" {
		if mark, err = parsePageToken(req.PageToken); err != nil {
			return nil, invalidParams(&fieldViolation{Field: "pageToken", Description: err.Error()})
		}
	}
	var match []*a2a.Task
	for _, t := range s.tasks.list(ctx) {
		switch {
		case req.ContextID != "" && t.ContextID != req.ContextID,
			status != "" && status != "TASK_STATE_UNSPECIFIED" && v1State(t.Status.State) != status,
			!after.IsZero() && (t.Status.Timestamp == nil || t.Status.Timestamp.Before(after)):
			continue
		}
		match = append(match, t)
	}
	rest := match
	if req.PageToken != "" {
		i, found := slices.BinarySearchFunc(match, mark, func(t *a2a.Task, k listKey) int { return listKeyOf(t).compare(k) })
		if found {
			i++
		}
		rest = match[i:]
	}
	page := rest[:min(int(size), len(rest))]
	resp := v1ListTasksResponse{Tasks: []v1Task{}, PageSize: size, TotalSize: int32(len(match))}
	for _, t := range page {
		resp.Tasks = append(resp.Tasks, v1TaskOf(t, req.HistoryLength, req.IncludeArtifacts))
	}
	if len(page) < len(rest) {
		resp.NextPageToken = pageToken(listKeyOf(page[len(page)-1]))
	}
	return resp, nil
}

// pageToken is the page token of ListTasks that marks k, the key of a
// page's last task: its status timestamp, in RFC 3339 with nanoseconds,
// and its id, joined by a space, in unpadded URL-safe base64.
func pageToken(k listKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.updated.UTC().Format(time.RFC3339Nano) + " " + string(k.id)))
}

// parsePageToken returns the key a token of pageToken marks, or an error
// saying that token is not one.
func parsePageToken(token string) (listKey, error) {
	errNotToken := errors.New("is not a page token of this agent's ListTasks; send the nextPageToken of the page before, or none for the first page")
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return listKey{}, errNotToken
	}
	ts, id, ok := strings.Cut(string(b), " ")
	if !ok || id == "" {
		return listKey{}, errNotToken
	}
	updated, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return listKey{}, errNotToken
	}
	return listKey{updated: updated, id: a2a.TaskID(id)}, nil
}
