package trusta2a_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// taskPage is the part of a ListTasks answer the paging tests read.
type taskPage struct {
	IDs           []string
	NextPageToken string
	TotalSize     int
}

// listTasks answers ListTasks of params as key.
func (f *fixture) listTasks(t *testing.T, key, params string) taskPage {
	t.Helper()
	res, rerr := f.call1(t, key, "1.0", "ListTasks", params)
	if rerr != nil {
		t.Fatalf("ListTasks %s: %+v", params, rerr)
	}
	var out struct {
		Tasks         []v1TaskState
		NextPageToken string
		TotalSize     int
	}
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	page := taskPage{NextPageToken: out.NextPageToken, TotalSize: out.TotalSize}
	for _, task := range out.Tasks {
		page.IDs = append(page.IDs, task.ID)
	}
	return page
}

// startWorking starts n calls as key with returnImmediately, each held
// by g until released, and returns the ids of their tasks in the order
// ListTasks lists them.
func (f *fixture) startWorking(t *testing.T, g gated, key string, n int) []string {
	t.Helper()
	for range n {
		f.startLater(t, key)
		<-g.entered
	}
	all := f.listTasks(t, key, `{}`)
	if len(all.IDs) != n {
		t.Fatalf("ListTasks: %v, want %d tasks", all.IDs, n)
	}
	return all.IDs
}

// Paging through the working tasks goes on after the task that ended the
// page before has left the filter (it was canceled): the next page holds
// the working tasks that followed it.
func TestListTasks_pageAfterTaskLeftFilter(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	ids := f.startWorking(t, g, "demo-key", 3)
	const working = `{"status":"TASK_STATE_WORKING","pageSize":1`
	first := f.listTasks(t, "demo-key", working+`}`)
	if diff := cmp.Diff(ids[:1], first.IDs); diff != "" || first.NextPageToken == "" || first.TotalSize != 3 {
		t.Fatalf("first page (-want +got):\n%s; token %q, total %d", diff, first.NextPageToken, first.TotalSize)
	}
	if _, rerr := f.call1(t, "demo-key", "1.0", "CancelTask", map[string]string{"id": ids[0]}); rerr != nil {
		t.Fatal(rerr)
	}
	second := f.listTasks(t, "demo-key", working+`,"pageToken":"`+first.NextPageToken+`"}`)
	if diff := cmp.Diff(ids[1:2], second.IDs); diff != "" || second.NextPageToken == "" || second.TotalSize != 2 {
		t.Fatalf("second page (-want +got):\n%s; token %q, total %d", diff, second.NextPageToken, second.TotalSize)
	}
	last := f.listTasks(t, "demo-key", working+`,"pageToken":"`+second.NextPageToken+`"}`)
	if diff := cmp.Diff(ids[2:], last.IDs); diff != "" || last.NextPageToken != "" {
		t.Errorf("last page (-want +got):\n%s; token %q", diff, last.NextPageToken)
	}
}

// A task updated between two pages moves to the front of the list; the
// next page holds the tasks that followed the page before, none of it
// served again.
func TestListTasks_pageAfterTaskUpdated(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	ids := f.startWorking(t, g, "demo-key", 3)
	first := f.listTasks(t, "demo-key", `{"pageSize":2}`)
	if diff := cmp.Diff(ids[:2], first.IDs); diff != "" || first.NextPageToken == "" {
		t.Fatalf("first page (-want +got):\n%s; token %q", diff, first.NextPageToken)
	}
	if _, rerr := f.call1(t, "demo-key", "1.0", "CancelTask", map[string]string{"id": ids[1]}); rerr != nil {
		t.Fatal(rerr)
	}
	if now := f.listTasks(t, "demo-key", `{}`); now.IDs[0] != ids[1] {
		t.Fatalf("ListTasks after canceling %s: %v, want it first", ids[1], now.IDs)
	}
	next := f.listTasks(t, "demo-key", `{"pageSize":2,"pageToken":"`+first.NextPageToken+`"}`)
	if diff := cmp.Diff(ids[2:], next.IDs); diff != "" || next.NextPageToken != "" || next.TotalSize != 3 {
		t.Errorf("next page (-want +got):\n%s; token %q, total %d", diff, next.NextPageToken, next.TotalSize)
	}
}

// A page token that does not decode is invalid params naming pageToken.
func TestListTasks_pageTokenUnreadable(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	f.send1(t, "demo-key", `[{"text":"Validate the claimed result \"17 * 3 = 51\" with policy fast"}]`)
	for _, token := range []string{"x", "bm90IGEgdG9rZW4", "MjAyNi0wMS0wMVQwMDowMDowMFog"} {
		_, rerr := f.call1(t, "demo-key", "1.0", "ListTasks", map[string]string{"pageToken": token})
		if rerr == nil || rerr.Code != -32602 || violated(rerr) != "pageToken" {
			t.Errorf("ListTasks with pageToken %q: %+v, want -32602 naming pageToken", token, rerr)
		}
	}
}
