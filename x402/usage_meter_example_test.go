package x402_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A server that carries payments outside HTTP headers meters the paid
// work's context, lets the work report its usage with ReportUsage as an
// HTTP handler would, and settles what it reported.
func ExampleMeterUsage() {
	offer, err := evm.UptoUSDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		log.Fatal(err)
	}
	ctx, meter := x402.MeterUsage(context.Background(), offer)

	// The paid work: 2 runs at 1000 each.
	if err := x402.ReportUsage(ctx, x402.Usage{Amount: 2000, Units: 2, Unit: "run"}); err != nil {
		log.Fatal(err)
	}

	charged, usage := meter.Charge() // settle charged, then report usage with it
	sr := &x402.SettleResponse{Success: true, Amount: charged.Amount}
	sr.SetUsage(*usage)
	u, _ := x402.UsageFromSettlement(sr)
	fmt.Printf("settle %s of %s; reported %d %ss of at most %d\n", charged.Amount, offer.Amount, u.Units, u.Unit, u.MaxAmount)
	fmt.Println("a later report:", x402.ReportUsage(ctx, x402.Usage{Amount: 1}))
	// Output:
	// settle 2000 of 5000; reported 2 runs of at most 5000
	// a later report: x402: usage reported after the handler returned
}
