package trust

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestExams_forgetPerCaller checks that a full store of exams forgets the
// oldest exam of the caller holding the most, by count and by bytes, so
// that one caller's stream of validations never forgets another's.
func TestExams_forgetPerCaller(t *testing.T) {
	small := &Request{Mode: ModeValidation, Task: Task{ClaimedResult: json.RawMessage(`"x"`)}}
	big := &Request{Mode: ModeValidation, Task: Task{ClaimedResult: json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)}}

	e := newExams(10)
	e.put(examKey{"alice", "a1"}, small)
	for i := range 50 {
		e.put(examKey{"bob", "b" + strconv.Itoa(i)}, small)
	}
	if _, ok := e.get(examKey{"alice", "a1"}); !ok {
		t.Error("bob's 50 validations forgot alice's one, by count")
	}
	if _, ok := e.get(examKey{"bob", "b49"}); !ok {
		t.Error("bob's latest validation was forgotten")
	}
	if _, ok := e.get(examKey{"bob", "b0"}); ok {
		t.Error("bob's oldest validation is still remembered past the bound")
	}
	if e.n != 10 || len(e.byKey) != 10 {
		t.Errorf("%d exams (%d keys), want 10", e.n, len(e.byKey))
	}

	e = newExams(10_000)
	e.put(examKey{"alice", "a1"}, small)
	for i := range 100 {
		e.put(examKey{"bob", "b" + strconv.Itoa(i)}, big)
	}
	if _, ok := e.get(examKey{"alice", "a1"}); !ok {
		t.Error("bob's large validations forgot alice's small one, by bytes")
	}
	if e.total > e.maxBytes {
		t.Errorf("the exams hold %d bytes, over the bound %d", e.total, e.maxBytes)
	}
	var sum int64
	for _, b := range e.bytes {
		sum += b
	}
	if sum != e.total {
		t.Errorf("the callers' bytes add up to %d, the total says %d", sum, e.total)
	}
}
