package x402test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// TestOutcomeStore runs the conformance suite against outcome stores
// made by newStore, which is called once per subtest and must return an
// empty store that keeps an outcome at least a minute; close it with
// t.Cleanup. The store is given the current time, since Keep takes none.
// The suite checks that:
//
//   - Lookup returns what Keep kept, equal in every field (the request,
//     payer, delivery, response status, header and body, settlement,
//     pending capture, usage, unpaid answer and its SettleBy), and a refusal without
//     settlement or usage, and an answer kept while it settles, as they
//     were kept;
//   - the answer's header and body are kept byte for byte: a header
//     value that is not UTF-8 (obs-text such as "caf\xe9"), an empty
//     value beside a missing one, repeated values in their order, and a
//     body that is not UTF-8;
//   - an outcome is found before its until and not at or after it, and
//     an unknown key is not found;
//   - a second Keep under a key replaces the first, until included: a
//     pending capture becomes the delivered outcome;
//   - outcomes under different keys are kept apart;
//   - of concurrent Keeps under one key, Lookup returns one of them whole
//     (run it with -race);
//   - a done context is reported before any work: Keep on it keeps
//     nothing.
func TestOutcomeStore(t *testing.T, newStore func(t *testing.T) x402.OutcomeStore) {
	now := time.Now().Truncate(time.Second)
	until := now.Add(time.Minute)
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		wantOutcome(t, s, "key-1", now, pendingOutcome(1), until)
		wantOutcome(t, s, "key-2", now, refusalOutcome(), until)
		wantOutcome(t, s, "key-3", now, settlingOutcome(3), until)
	})
	t.Run("Bytes", func(t *testing.T) {
		s := newStore(t)
		o := bytesOutcome()
		mustKeep(t, s, "key-1", o, until)
		got, ok, err := s.Lookup(context.Background(), "key-1", now)
		if err != nil || !ok {
			t.Fatalf("Lookup = found %v, %v; want the outcome kept", ok, err)
		}
		// Compared exactly: a retry must get the bytes first sent.
		if diff := cmp.Diff(o.Response, got.Response); diff != "" {
			t.Errorf("Lookup's answer is not the one kept (-kept +read):\n%s", diff)
		}
	})
	t.Run("Expiry", func(t *testing.T) {
		s := newStore(t)
		mustKeep(t, s, "key-1", deliveredOutcome(1), until)
		for _, at := range []time.Time{until.Add(-time.Second), until, until.Add(time.Second)} {
			_, ok, err := s.Lookup(context.Background(), "key-1", at)
			if err != nil {
				t.Fatal(err)
			}
			if want := at.Before(until); ok != want {
				t.Errorf("Lookup %s after the until = found %v, want %v", at.Sub(until), ok, want)
			}
		}
		if _, ok, err := s.Lookup(context.Background(), "key-2", now); err != nil || ok {
			t.Errorf("Lookup of an unknown key = found %v, %v; want false, nil", ok, err)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		s := newStore(t)
		mustKeep(t, s, "key-1", pendingOutcome(1), until)
		delivered := deliveredOutcome(1)
		sooner := now.Add(30 * time.Second)
		wantOutcome(t, s, "key-1", now, delivered, sooner)
		if _, ok, err := s.Lookup(context.Background(), "key-1", sooner); err != nil || ok {
			t.Errorf("Lookup at the second Keep's until = found %v, %v; want false: the until is replaced too", ok, err)
		}
	})
	t.Run("KeysApart", func(t *testing.T) {
		s := newStore(t)
		mustKeep(t, s, "key-1", deliveredOutcome(1), until)
		mustKeep(t, s, "key-2", deliveredOutcome(2), until)
		wantOutcome(t, s, "key-1", now, deliveredOutcome(1), until)
		wantOutcome(t, s, "key-2", now, deliveredOutcome(2), until)
	})
	t.Run("ConcurrentKeep", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for n := range 8 {
			wg.Go(func() {
				if err := s.Keep(context.Background(), "key-1", deliveredOutcome(n), until); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, ok, err := s.Lookup(context.Background(), "key-1", now)
		if err != nil || !ok {
			t.Fatalf("Lookup after concurrent Keeps = found %v, %v", ok, err)
		}
		var n int
		if _, err := fmt.Sscanf(got.Request, "request-%d", &n); err != nil {
			t.Fatalf("Lookup after concurrent Keeps = request %q, not one kept", got.Request)
		}
		if diff := cmp.Diff(deliveredOutcome(n), got, cmpPayment()); diff != "" {
			t.Errorf("Lookup after concurrent Keeps is not one outcome kept whole (-want +got):\n%s", diff)
		}
	})
	t.Run("ContextDone", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Keep(ctx, "key-1", deliveredOutcome(1), until); !errors.Is(err, context.Canceled) {
			t.Errorf("Keep = %v, want context.Canceled", err)
		}
		if _, ok, err := s.Lookup(context.Background(), "key-1", now); err != nil || ok {
			t.Errorf("Keep on a done context kept the outcome: Lookup = found %v, %v", ok, err)
		}
		mustKeep(t, s, "key-1", deliveredOutcome(1), until)
		if _, _, err := s.Lookup(ctx, "key-1", now); !errors.Is(err, context.Canceled) {
			t.Errorf("Lookup = %v, want context.Canceled", err)
		}
	})
}

func mustKeep(t *testing.T, s x402.OutcomeStore, key string, o x402.Outcome, until time.Time) {
	t.Helper()
	if err := s.Keep(context.Background(), key, o, until); err != nil {
		t.Fatalf("Keep(%s) = %v", key, err)
	}
}

// wantOutcome keeps o under key and checks that Lookup at now returns it.
func wantOutcome(t *testing.T, s x402.OutcomeStore, key string, now time.Time, o x402.Outcome, until time.Time) {
	t.Helper()
	mustKeep(t, s, key, o, until)
	got, ok, err := s.Lookup(context.Background(), key, now)
	if err != nil || !ok {
		t.Fatalf("Lookup(%s) = found %v, %v; want the outcome kept", key, ok, err)
	}
	if diff := cmp.Diff(o, got, cmpPayment()); diff != "" {
		t.Errorf("Lookup(%s) (-want +got):\n%s", key, diff)
	}
}

// pendingOutcome returns an outcome with every field set: an
// "auth-capture" payment whose capture is pending, the answer held back.
func pendingOutcome(n int) x402.Outcome {
	o := deliveredOutcome(n)
	o.PendingCapture = Payment(n, "1000").ID
	o.Usage = &x402.Usage{Amount: 700, Units: 7, Unit: "run", MaxAmount: 1000}
	o.Settlement.Success, o.Settlement.Transaction = false, ""
	o.Settlement.ErrorReason, o.Settlement.ErrorMessage = "unexpected_settle_error", "the capture could not be settled"
	return o
}

// settlingOutcome returns the outcome of an answer kept while its
// "upto" payment is settled, numbered n.
func settlingOutcome(n int) x402.Outcome {
	o := deliveredOutcome(n)
	o.Delivered, o.Settlement, o.Unpaid = false, nil, &o.Response
	o.SettleBy = time.Date(2026, 12, 7, 19, 30, 15, 250_000_000, time.UTC)
	o.Response = x402.BufferedResponse{Status: http.StatusServiceUnavailable, Body: []byte(`{"status":503}`)}
	o.Usage = &x402.Usage{Amount: 300, Units: 3, Unit: "run", MaxAmount: 1000}
	return o
}

// deliveredOutcome returns the outcome of an answer delivered and
// settled, numbered n.
func deliveredOutcome(n int) x402.Outcome {
	return x402.Outcome{
		Request:   fmt.Sprintf("request-%d", n),
		Payer:     "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		Delivered: true,
		Response: x402.BufferedResponse{Status: http.StatusCreated,
			Header: http.Header{"Content-Type": {"application/json"}, "X-Vouch-Verdict": {"VALID", "checked"}},
			Body:   []byte(fmt.Sprintf(`{"answer":%d}`, n))},
		Settlement: &x402.SettleResponse{Success: true, Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
			Transaction: fmt.Sprintf("0x%064x", n), Network: "eip155:84532", Amount: "700",
			Extensions: map[string]json.RawMessage{x402.ExtensionEscrow: json.RawMessage(`{"info":{"id":"0x01","state":"captured"}}`)}},
	}
}

// refusalOutcome returns the outcome of an answer refused: no
// settlement, no usage.
func refusalOutcome() x402.Outcome {
	return x402.Outcome{Request: "request-refused", Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		Response: x402.BufferedResponse{Status: http.StatusBadGateway, Header: http.Header{"Content-Type": {"application/problem+json"}}, Body: []byte(`{"title":"not delivered"}`)}}
}

// bytesOutcome returns a delivered outcome whose answer holds what JSON
// strings cannot: header values and a body that are not UTF-8, with an
// empty value and repeated values.
func bytesOutcome() x402.Outcome {
	o := deliveredOutcome(1)
	o.Response.Header = http.Header{
		"Content-Type":     {"text/plain; charset=iso-8859-1"},
		"Content-Language": {"fr"},
		"X-Place":          {"caf\xe9", "Z\xfcrich", "caf\u00e9"},
		"X-Bytes":          {"\x80\xff\xc3", ""},
		"X-Empty":          {""},
		"X-Repeated":       {"b", "a", "b"},
	}
	o.Response.Body = []byte("caf\xe9 \xff\x00 end")
	return o
}
