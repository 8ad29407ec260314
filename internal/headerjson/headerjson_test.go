package headerjson

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A header read back is the header written, byte for byte, nil and empty
// values apart.
func TestHeader_roundTrip(t *testing.T) {
	for _, h := range []http.Header{
		nil,
		{},
		{"X-Place": {"caf\xe9", "Z\xfcrich", "café"}, "X-Bytes": {"\x80\xff\xc3", ""}},
		{"X-Empty": {""}, "X-None": {}, "X-Nil": nil, "X-Repeated": {"b", "a", "b"}},
		{"X-Json": {`{"base64":"AA=="}`, "<&>", "\x00\t"}},
	} {
		b, err := json.Marshal(Header(h))
		if err != nil {
			t.Fatal(err)
		}
		var got Header
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("Unmarshal(%s) = %v", b, err)
		}
		if diff := cmp.Diff(h, http.Header(got)); diff != "" {
			t.Errorf("header read back from %s (-written +read):\n%s", b, diff)
		}
	}
}

// A header of UTF-8 values is written as json.Marshal writes an
// http.Header, and what json.Marshal wrote is read as before.
func TestHeader_oldFormat(t *testing.T) {
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "X-Note": {"café", "<&>", ""}}
	old, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	now, err := json.Marshal(Header(h))
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != string(old) {
		t.Errorf("json.Marshal(Header) = %s, want %s as json.Marshal(http.Header)", now, old)
	}
	var got Header
	if err := json.Unmarshal([]byte(`{"X-Note":["caf\ufffd","a"],"X-Nil":null}`), &got); err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-Note": {"caf\ufffd", "a"}, "X-Nil": nil}
	if diff := cmp.Diff(want, http.Header(got)); diff != "" {
		t.Errorf("old header read (-want +got):\n%s", diff)
	}
}
