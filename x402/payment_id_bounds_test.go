package x402_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// MemoryPaymentIDs keeps responses within MaxBytes as well as MaxEntries:
// ten responses of 4 KiB in a store of 3 responses' bytes keep 3, the
// others' Finish fails with ErrPaymentIDsFull and forgets their id (a
// retry begins it anew); once the kept ones expire they make room.
func TestMemoryPaymentIDs_maxBytes(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	body := bytes.Repeat([]byte("x"), 4096)
	const each = 4096 + 2*32 + 512 // body, id and request, overhead
	m := &x402.MemoryPaymentIDs{MaxBytes: 3*each + each/2}
	id := func(i int) string { return fmt.Sprintf("payer/payment-id-%015d", i) }
	for i := range 10 {
		if _, fresh, err := m.Begin(ctx, id(i), "request-digest-of-32-bytes-long!", now, now.Add(time.Hour)); err != nil || !fresh {
			t.Fatalf("Begin %d = %v, %v", i, fresh, err)
		}
		err := m.Finish(ctx, id(i), x402.PaymentIDRecord{Request: "request-digest-of-32-bytes-long!", Response: x402.BufferedResponse{Status: 200, Body: body}})
		if full := i >= 3; full != errors.Is(err, x402.ErrPaymentIDsFull) {
			t.Errorf("Finish %d = %v; want ErrPaymentIDsFull %v", i, err, full)
		}
	}
	kept := 0
	for i := range 10 {
		r, fresh, err := m.Begin(ctx, id(i), "request-digest-of-32-bytes-long!", now, now.Add(time.Hour))
		switch {
		case err != nil:
			t.Fatal(err)
		case !fresh && r.Done && bytes.Equal(r.Response.Body, body):
			kept++
		case fresh:
			m.Release(ctx, id(i)) // forgotten: begun anew
		default:
			t.Errorf("id %d: a record %+v neither kept nor forgotten", i, r)
		}
	}
	if kept != 3 {
		t.Errorf("%d responses of %d bytes kept in %d bytes, want 3", kept, each, m.MaxBytes)
	}
	later := now.Add(2 * time.Hour)
	if _, fresh, err := m.Begin(ctx, id(10), "request-digest-of-32-bytes-long!", later, later.Add(time.Hour)); err != nil || !fresh {
		t.Fatalf("Begin after expiry = %v, %v", fresh, err)
	}
	if err := m.Finish(ctx, id(10), x402.PaymentIDRecord{Request: "request-digest-of-32-bytes-long!", Response: x402.BufferedResponse{Status: 200, Body: body}}); err != nil {
		t.Errorf("Finish once the kept responses expired = %v", err)
	}
}
