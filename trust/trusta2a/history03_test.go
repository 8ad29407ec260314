package trusta2a_test

import (
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// A 0.3 message/send's configuration.historyLength bounds the history of
// the task it answers, blocking or not, as tasks/get's historyLength
// does; the task kept for tasks/get keeps all of it.
func TestMessageSend03_historyLength(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	f.url += "/a2a"
	for _, tt := range []struct {
		config string
		want   int
	}{
		{`{"historyLength":0}`, 0},
		{`{"historyLength":0,"blocking":false}`, 0},
		{`{"historyLength":1}`, 1},
		{`{"historyLength":1,"blocking":false}`, 1},
		{`{"blocking":true}`, 1},
		{`{"blocking":false}`, 1},
	} {
		task, rerr := f.rpc03(t, "demo-key", send03(tt.config))
		if rerr != nil {
			t.Fatalf("message/send with configuration %s: %+v", tt.config, rerr)
		}
		if len(task.History) != tt.want {
			t.Errorf("message/send with configuration %s: the answer holds %d history messages, want %d", tt.config, len(task.History), tt.want)
		}
		if kept := f.get03(t, "demo-key", task.ID); len(kept.History) != 1 {
			t.Errorf("tasks/get after message/send with configuration %s: %d history messages, want the message sent", tt.config, len(kept.History))
		}
	}
}
