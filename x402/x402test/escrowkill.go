package x402test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

// The environment of a child process of [KillBetweenHoldAndVerdict].
const (
	envKillURL   = "VOUCH_X402TEST_ESCROW_URL"
	envKillOffer = "VOUCH_X402TEST_ESCROW_OFFER"
)

// The verdicts the child records, by payment: the first has none (the
// server died in its work), the second is VALID for the whole hold, the
// third INVALID.
var killVerdicts = [][2]string{{}, {"VALID", fmt.Sprint(EscrowHoldAmount)}, {"INVALID", "0"}}

// KillChild reports whether this process is the child of a
// [KillBetweenHoldAndVerdict] test; the test then calls RunKillChild
// with its ledger instead of testing.
func KillChild() bool { return os.Getenv(envKillURL) != "" }

// RunKillChild is the child's work: it places three holds through the
// parent's facilitator, records each in l with its verdict (none, VALID,
// INVALID), printing "held <id>" after each, prints "working" and waits
// to be killed, as a server dies before it captures or voids anything.
func RunKillChild(l x402.EscrowLedger) {
	var offer x402.PaymentRequirements
	if err := json.Unmarshal([]byte(os.Getenv(envKillOffer)), &offer); err != nil {
		fmt.Println("error", err)
		return
	}
	ctx := context.Background()
	fc := &x402.FacilitatorClient{URL: os.Getenv(envKillURL)}
	for i, v := range killVerdicts {
		p, err := HoldEscrow(ctx, fc, offer, i)
		if err == nil {
			_, _, err = l.Hold(ctx, p)
		}
		if err == nil && v[0] != "" {
			_, err = l.Decide(ctx, p.ID, v[0], v[1])
		}
		if err != nil {
			fmt.Println("error", err)
			return
		}
		fmt.Println("held", p.ID)
	}
	fmt.Println("working")
	select {} // the work, until SIGKILL
}

// KillBetweenHoldAndVerdict runs the test named run (this test, in a
// child process: see [KillChild]) with env added to its environment,
// kills the child with SIGKILL once it holds three payments and works,
// and checks the recovery: open returns n ledgers over what the child
// wrote (n servers restarting), whose recoveries run at once; between
// them they capture the VALID payment and void the other two, each
// operation sent once, and the bed's balances show it. A second round
// of recoveries sends nothing.
func KillBetweenHoldAndVerdict(t *testing.T, bed *EscrowBed, run string, env []string, n int, open func() x402.EscrowLedger) {
	t.Helper()
	offer, err := json.Marshal(bed.Offer)
	if err != nil {
		t.Fatal(err)
	}
	start := bed.Balances()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), envKillURL+"="+bed.URL, envKillOffer+"="+string(offer))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var held []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		line := lines.Text()
		if id, ok := strings.CutPrefix(line, "held "); ok {
			held = append(held, id)
		}
		if strings.HasPrefix(line, "error") {
			t.Errorf("child: %s", line)
		}
		if line == "working" {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
	if len(held) != len(killVerdicts) {
		t.Fatalf("the child held %d payments, want %d", len(held), len(killVerdicts))
	}
	const hold = EscrowHoldAmount
	if got, want := bed.Balances(), start.Plus(-3*hold, 3*hold, 0); got != want {
		t.Fatalf("balances after the kill %+v, want %+v: three holds", got, want)
	}

	f := &countingFacilitator{Facilitator: bed.Facilitator}
	recoveries := make([]*escrow.Recovery, n)
	for i := range recoveries {
		recoveries[i] = &escrow.Recovery{
			Ledger: open(), Facilitator: f, Authorizer: bed.Authorizer,
			// The restart comes later than the grace, as a real one may:
			// the payment without a verdict is no longer in anyone's work.
			Now: func() time.Time { return time.Now().Add(escrow.DefaultGrace) },
		}
	}
	finishAll := func() []escrow.Finished {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			done []escrow.Finished
		)
		for _, r := range recoveries {
			wg.Go(func() {
				d, err := r.Finish(context.Background())
				if err != nil {
					t.Errorf("Finish: %v", err)
				}
				mu.Lock()
				done = append(done, d...)
				mu.Unlock()
			})
		}
		wg.Wait()
		return done
	}
	done := finishAll()
	want := map[string]string{held[0]: x402.EscrowVoid, held[1]: x402.EscrowCapture, held[2]: x402.EscrowVoid}
	for _, d := range done {
		if want[d.ID] != d.Outcome.Operation || !d.Outcome.Settlement.Success {
			t.Errorf("payment %s: %+v, want a successful %s", d.ID, d.Outcome, want[d.ID])
		}
	}
	if got := f.settles.Load(); got != 3 {
		t.Errorf("%d lifecycle settles sent by %d recoveries, want 3: one per payment", got, n)
	}
	finished := bed.Balances()
	if want := start.Plus(-hold, 0, hold); finished != want {
		t.Errorf("balances after recovery %+v, want %+v: the VALID payment captured, the others voided", finished, want)
	}
	for _, id := range held {
		p, err := recoveries[0].Ledger.Get(context.Background(), id)
		if err != nil || p.State == x402.EscrowHeld {
			t.Errorf("payment %s after recovery: %s, %v", id, p.State, err)
		}
	}
	if again := finishAll(); len(again) != 0 || f.settles.Load() != 3 || bed.Balances() != finished {
		t.Errorf("recovery run again: %+v, %d settles in all, balances %+v; want nothing done", again, f.settles.Load(), bed.Balances())
	}
}

// countingFacilitator counts the settles it relays.
type countingFacilitator struct {
	x402.Facilitator
	settles atomic.Int64
}

func (c *countingFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	c.settles.Add(1)
	return c.Facilitator.Settle(ctx, p, r)
}
