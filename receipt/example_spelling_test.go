package receipt_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// A receipt that a JSON library wrote again (indented, here) verifies, in
// its canonical form, and is reported as not the bytes as issued; a
// session id rewritten to one that canonical form would round back to the
// signed id fails the schema check with the rule number.
func ExampleVerifier_Verify_otherSpelling() {
	signer, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))
	issuer := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}
	issued, _ := issuer.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{RouterTraceRefs: true}},
		Mode:    "validation", Status: "VALID", Confidence: 0.9, Owner: "shop-42",
		Refs: &receipt.Refs{Sessions: []int64{1 << 53}, Tasks: []string{}, RouterTraceIDs: []string{}},
	})
	verifier, _ := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})

	var indented bytes.Buffer
	_ = json.Indent(&indented, issued.JSON, "", "  ")
	res, err := verifier.Verify(indented.Bytes(), receipt.Originals{}, time.Now())
	fmt.Println(err == nil, res.AsIssued)

	edited := strings.Replace(string(issued.JSON), "9007199254740992", "9007199254740993", 1)
	res, _ = verifier.Verify([]byte(edited), receipt.Originals{}, time.Now())
	c, _ := res.Check(receipt.CheckSchema)
	fmt.Println(res.Valid(), c.Errors[0].Field, c.Errors[0].Rule)
	// Output:
	// true false
	// false cortensor_refs.sessions[0] number
}
