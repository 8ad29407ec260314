package trusta2a

import (
	"fmt"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// withHistory keeps the last n messages of a task's history, on a copy:
// the task it was given keeps all of them.
func TestWithHistory(t *testing.T) {
	msgs := []*a2a.Message{{ID: "m1"}, {ID: "m2"}, {ID: "m3"}}
	task := &a2a.Task{ID: "t1", History: msgs}
	for _, tt := range []struct {
		n    *int
		want []string
	}{
		{nil, []string{"m1", "m2", "m3"}},
		{new(0), nil},
		{new(2), []string{"m2", "m3"}},
		{new(3), []string{"m1", "m2", "m3"}},
		{new(7), []string{"m1", "m2", "m3"}},
	} {
		arg := "nil"
		if tt.n != nil {
			arg = fmt.Sprint(*tt.n)
		}
		var got []string
		for _, m := range withHistory(task, tt.n).History {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("withHistory(%s): history %v, want %v", arg, got, tt.want)
		}
		if len(task.History) != 3 {
			t.Fatalf("withHistory(%s) left the task it was given %d messages, want 3", arg, len(task.History))
		}
	}
}
