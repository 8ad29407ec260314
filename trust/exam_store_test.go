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
	if n := e.kept.Len(); n != 10 {
		t.Errorf("%d exams, want 10", n)
	}

	e = newExams(10_000)
	e.put(examKey{"alice", "a1"}, small)
	for i := range 100 {
		e.put(examKey{"bob", "b" + strconv.Itoa(i)}, big)
	}
	if _, ok := e.get(examKey{"alice", "a1"}); !ok {
		t.Error("bob's large validations forgot alice's small one, by bytes")
	}
	if b := e.kept.Bytes(); b > e.maxBytes {
		t.Errorf("the exams hold %d bytes, over the bound %d", b, e.maxBytes)
	}
}

// TestExams_addressesOfOnePrefixAreOneCaller: validations of anonymous
// callers at 50 IPv6 addresses of one /64 forget their own, never
// alice's.
func TestExams_addressesOfOnePrefixAreOneCaller(t *testing.T) {
	small := &Request{Mode: ModeValidation, Task: Task{ClaimedResult: json.RawMessage(`"x"`)}}
	e := newExams(10)
	e.put(examKey{"alice", "a1"}, small)
	e.put(examKey{"alice", "a2"}, small)
	for i := range 50 {
		e.put(examKey{"ip:2001:db8::" + strconv.FormatInt(int64(i+1), 16), "t"}, small)
	}
	for _, id := range []string{"a1", "a2"} {
		if _, ok := e.get(examKey{"alice", id}); !ok {
			t.Errorf("50 addresses of one /64 forgot alice's validation %s", id)
		}
	}
	if _, ok := e.get(examKey{"ip:2001:db8::32", "t"}); !ok {
		t.Error("the latest address's validation was forgotten")
	}
	if _, ok := e.get(examKey{"ip:2001:db8::29", "t"}); ok {
		t.Error("the prefix holds more than its share")
	}
}

// TestExams_keysApart checks that two callers whose names and trace ids
// spell the same text together keep their exams apart.
func TestExams_keysApart(t *testing.T) {
	e := newExams(10)
	e.put(examKey{"al", "ice1"}, &Request{Mode: ModeValidation, Task: Task{Type: "first"}})
	e.put(examKey{"ali", "ce1"}, &Request{Mode: ModeValidation, Task: Task{Type: "second"}})
	for k, want := range map[examKey]string{{"al", "ice1"}: "first", {"ali", "ce1"}: "second"} {
		if x, ok := e.get(k); !ok || x.req.Task.Type != want {
			t.Errorf("exam of %q, %q: found %v, want the request %q", k.caller, k.traceID, ok, want)
		}
	}
}
