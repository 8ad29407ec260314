package x402_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// digest stands for the request digest the middleware passes.
const digest = "request-digest-of-32-bytes-long!"

// paymentIDOf returns payer's i-th payment id, as the middleware keys it.
func paymentIDOf(payer string, i int) string {
	return fmt.Sprintf("%s/payment-id-%015d", payer, i)
}

// pay begins id at now and keeps body as its response.
func pay(t *testing.T, m *x402.MemoryPaymentIDs, id string, now time.Time, body []byte) {
	t.Helper()
	if _, fresh, err := m.Begin(t.Context(), id, digest, now, now.Add(time.Hour)); err != nil || !fresh {
		t.Fatalf("Begin(%s) = %v, %v; want true", id, fresh, err)
	}
	if err := m.Finish(t.Context(), id, now.Add(time.Hour), now.Add(time.Hour), x402.PaymentIDRecord{Request: digest, Response: x402.BufferedResponse{Status: 200, Body: body}}); err != nil {
		t.Fatalf("Finish(%s) = %v", id, err)
	}
}

// kept reports which of ids have their response kept at now: a Begin
// that finds it, done; an id forgotten is released again.
func kept(t *testing.T, m *x402.MemoryPaymentIDs, now time.Time, ids ...string) []string {
	t.Helper()
	var got []string
	for _, id := range ids {
		r, fresh, err := m.Begin(t.Context(), id, digest, now, now.Add(time.Hour))
		switch {
		case err != nil:
			t.Fatalf("Begin(%s) = %v", id, err)
		case fresh:
			m.Release(t.Context(), id, now.Add(time.Hour))
		case r.Done:
			got = append(got, id)
		default:
			t.Errorf("Begin(%s) = a record %+v neither kept nor forgotten", id, r)
		}
	}
	return got
}

// MemoryPaymentIDs keeps responses within MaxBytes as well as MaxEntries:
// one payer's ten responses of 4 KiB in a store of three responses' bytes
// keep its latest three, each Finish forgetting its oldest; a response
// larger than MaxBytes is not kept: Finish fails with ErrPaymentIDsFull
// and forgets its id.
func TestMemoryPaymentIDs_maxBytes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	body := bytes.Repeat([]byte("x"), 4096)
	const each = 4096 + 2*32 + 512 // body, id and request, overhead
	m := &x402.MemoryPaymentIDs{MaxBytes: 3*each + each/2}
	var ids []string
	for i := range 10 {
		ids = append(ids, paymentIDOf("payer", i))
		pay(t, m, ids[i], now, body)
	}
	if diff := cmp.Diff(ids[7:], kept(t, m, now, ids...)); diff != "" {
		t.Errorf("responses kept (-want +got):\n%s", diff)
	}
	large := paymentIDOf("payer", 10)
	if _, fresh, err := m.Begin(t.Context(), large, digest, now, now.Add(time.Hour)); err != nil || !fresh {
		t.Fatalf("Begin = %v, %v", fresh, err)
	}
	err := m.Finish(t.Context(), large, now.Add(time.Hour), now.Add(time.Hour), x402.PaymentIDRecord{Request: digest, Response: x402.BufferedResponse{Status: 200, Body: bytes.Repeat(body, 4)}})
	if !errors.Is(err, x402.ErrPaymentIDsFull) {
		t.Errorf("Finish of a response larger than MaxBytes = %v; want ErrPaymentIDsFull", err)
	}
	if got := kept(t, m, now, large); len(got) != 0 {
		t.Errorf("the response larger than MaxBytes is kept")
	}
}

// One payer filling a MemoryPaymentIDs, by count or by bytes, forgets its
// own responses, never another payer's, and never refuses another
// payer's new id nor forgets the ids whose first request runs.
func TestMemoryPaymentIDs_payersApart(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	body := bytes.Repeat([]byte("x"), 4096)
	const each = 4096 + 2*32 + 512
	for name, m := range map[string]*x402.MemoryPaymentIDs{"MaxEntries": {MaxEntries: 4}, "MaxBytes": {MaxBytes: 4 * each}} {
		t.Run(name, func(t *testing.T) { fillAsOnePayer(t, m, now, body) })
	}
}

// fillAsOnePayer has eve pay twenty times into m, which holds a response
// of bob's and an id of a payer whose first request runs throughout, and
// checks that neither is forgotten and bob's next id is begun and kept.
func fillAsOnePayer(t *testing.T, m *x402.MemoryPaymentIDs, now time.Time, body []byte) {
	bob := paymentIDOf("0xb0b", 0)
	pay(t, m, bob, now, body)
	running := paymentIDOf("0xca7", 0)
	if _, fresh, err := m.Begin(t.Context(), running, digest, now, now.Add(time.Hour)); err != nil || !fresh {
		t.Fatalf("Begin(%s) = %v, %v", running, fresh, err)
	}
	var eve []string
	for i := range 20 { // refusing eve's own ids would do
		eve = append(eve, paymentIDOf("0xe7e", i))
		if _, fresh, err := m.Begin(t.Context(), eve[i], digest, now, now.Add(time.Hour)); err != nil || !fresh {
			continue
		}
		m.Finish(t.Context(), eve[i], now.Add(time.Hour), now.Add(time.Hour), x402.PaymentIDRecord{Request: digest, Response: x402.BufferedResponse{Status: 200, Body: body}})
	}
	if r, fresh, err := m.Begin(t.Context(), running, digest, now, now.Add(time.Hour)); err != nil || fresh || r.Done {
		t.Errorf("the id whose first request runs = %v, %v, done %v; want it held, running", fresh, err, r.Done)
	}
	if got := kept(t, m, now, bob); len(got) != 1 {
		t.Errorf("bob's response forgotten by eve's payments")
	}
	bob2 := paymentIDOf("0xb0b", 1)
	pay(t, m, bob2, now, body)
	if diff := cmp.Diff([]string{bob, bob2}, kept(t, m, now, bob, bob2)); diff != "" {
		t.Errorf("bob's responses kept (-want +got):\n%s", diff)
	}
	if got := kept(t, m, now, eve...); len(got) == 0 || got[len(got)-1] != eve[19] {
		t.Errorf("eve's responses kept %v; want her latest", got)
	}
}

// A payer with MaxInFlightPerPayer ids whose first request runs has its
// own next id refused with ErrPaymentIDsFull, none of them forgotten;
// another payer's new id begins.
func TestMemoryPaymentIDs_inFlightPerPayer(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	until := now.Add(time.Hour)
	m := &x402.MemoryPaymentIDs{MaxInFlightPerPayer: 2}
	for i := range 2 {
		if _, fresh, err := m.Begin(ctx, paymentIDOf("0xe7e", i), digest, now, until); err != nil || !fresh {
			t.Fatalf("Begin %d = %v, %v", i, fresh, err)
		}
	}
	if _, _, err := m.Begin(ctx, paymentIDOf("0xe7e", 2), digest, now, until); !errors.Is(err, x402.ErrPaymentIDsFull) {
		t.Errorf("a third id of the payer = %v; want ErrPaymentIDsFull", err)
	}
	if _, fresh, err := m.Begin(ctx, paymentIDOf("0xb0b", 0), digest, now, until); err != nil || !fresh {
		t.Errorf("another payer's id = %v, %v; want it begun", fresh, err)
	}
	for i := range 2 {
		if r, fresh, err := m.Begin(ctx, paymentIDOf("0xe7e", i), digest, now, until); err != nil || fresh || r.Request != digest {
			t.Errorf("id %d whose first request runs = %v, %v; want it held", i, fresh, err)
		}
	}
	if err := m.Finish(ctx, paymentIDOf("0xe7e", 0), until, until, x402.PaymentIDRecord{Request: digest, Response: x402.BufferedResponse{Status: 200}}); err != nil {
		t.Fatal(err)
	}
	if _, fresh, err := m.Begin(ctx, paymentIDOf("0xe7e", 2), digest, now, until); err != nil || !fresh {
		t.Errorf("the payer's third id once one finished = %v, %v; want it begun", fresh, err)
	}
}
