package x402_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

func TestBudget_concurrentSpendNeverOverdraws(t *testing.T) {
	b := x402.NewBudget(1000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 50 {
		wg.Go(func() {
			err := b.Spend(30)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, x402.ErrBudgetExceeded):
				refused++
			default:
				t.Errorf("Spend err = %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 33 || refused != 17 || b.Spent() != 990 || b.Remaining() != 10 {
		t.Errorf("ok %d refused %d spent %d remaining %d; want 33, 17, 990, 10", ok, refused, b.Spent(), b.Remaining())
	}
	b.Refund(90)
	if b.Spent() != 900 {
		t.Errorf("after refund spent = %d, want 900", b.Spent())
	}
	var unlimited *x402.Budget
	if err := unlimited.Spend(1 << 60); err != nil {
		t.Errorf("nil budget Spend err = %v, want nil", err)
	}
}

func TestDefaultSelect(t *testing.T) {
	cheap := x402.PaymentRequirements{Scheme: "exact", Network: "base-sepolia", Amount: "10", Asset: "0xA"}
	dear := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:84532", Amount: "200000", Asset: "0xA"}
	other := x402.PaymentRequirements{Scheme: "upto", Network: "eip155:84532", Amount: "1", Asset: "0xA"}
	p := &x402.Policy{Assets: []string{"0xa"}}
	got, err := x402.DefaultSelect(nil, p, []x402.PaymentRequirements{dear, other, cheap})
	if err != nil || got.Amount != "10" {
		t.Errorf("DefaultSelect = %+v, %v; want the first allowed offer (amount 10)", got, err)
	}
	_, err = x402.DefaultSelect(nil, p, []x402.PaymentRequirements{dear, other})
	if !errors.Is(err, x402.ErrNoAcceptableOffer) {
		t.Errorf("DefaultSelect(no allowed offer) err = %v, want ErrNoAcceptableOffer", err)
	}
	p = &x402.Policy{Networks: []string{"eip155:84532"}, Assets: []string{"0xA"}, MaxAmount: 1 << 20}
	if got, err := x402.DefaultSelect(nil, p, []x402.PaymentRequirements{dear}); err != nil || got.Amount != "200000" {
		t.Errorf("with a raised limit: %+v, %v; want the dear offer", got, err)
	}
}
