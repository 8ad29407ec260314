package x402

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
)

// paidRequest names the request a proof pays for: a digest of the
// method, the path, the Idempotency-Key and the proof's payload, and,
// behind a router or trust Handler, of the integration the request's
// credential names (httpapi.Principal), so that an answer kept for one
// integration is never delivered to another sending the same proof.
func paidRequest(r *http.Request, p *PaymentPayload) string {
	d := sha256.New()
	for _, s := range []string{r.Method, r.URL.Path, r.Header.Get(HeaderIdempotencyKey)} {
		io.WriteString(d, strconv.Itoa(len(s))+":"+s)
	}
	if principal := httpapi.Principal(r.Context()); principal != "" {
		io.WriteString(d, "principal "+strconv.Itoa(len(principal))+":"+principal)
	}
	canonical, _ := jsonbody.Canonical(p.Payload)
	d.Write(canonical)
	return hex.EncodeToString(d.Sum(nil))
}

// eip3009 is the authorization of an "exact" payload on an EVM network,
// as far as the middleware reads it.
type eip3009 struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// authorizationOf returns the EIP-3009 authorization p carries, or nil
// when its payload is not one.
func authorizationOf(p *PaymentPayload) *eip3009 {
	var ex struct {
		Authorization *eip3009 `json:"authorization"`
	}
	if json.Unmarshal(p.Payload, &ex) != nil || ex.Authorization == nil || ex.Authorization.From == "" || ex.Authorization.Nonce == "" {
		return nil
	}
	return ex.Authorization
}

// minReplaySeconds is the shortest a proof's replay record is kept.
const minReplaySeconds = 60

// replayKey names the authorization of a proof. An EIP-3009 authorization
// ("exact" on EVM networks, the core spec's payload) is named by network,
// asset, payer and nonce, as the token contract names it, a Permit2 one
// ("upto") by network, owner and nonce, as Permit2 names it, each held
// until its validBefore or deadline; any other payload by the hash of its
// JSON in one form (members sorted, strings and spacing as encoding/json
// writes them, numbers as written), held for the offer's timeout.
func replayKey(p *PaymentPayload, offer PaymentRequirements, now time.Time) (string, time.Time) {
	network, _ := NetworkCAIP2(offer.Network)
	until := now.Add(time.Duration(max(offer.MaxTimeoutSeconds, minReplaySeconds)) * time.Second)
	vb, _, ok := validBefore(p)
	if ok && time.Unix(vb, 0).After(until) {
		until = time.Unix(vb, 0)
	}
	if a := authorizationOf(p); a != nil {
		return strings.ToLower("eip3009:" + network + ":" + offer.Asset + ":" + a.From + ":" + a.Nonce), until
	}
	if owner, nonce, _, ok := permit2Of(p); ok {
		// A Permit2 nonce is a number, which "5" and "05" both write.
		if n, ok := new(big.Int).SetString(nonce, 10); ok {
			nonce = n.String()
		}
		return strings.ToLower("permit2:" + network + ":" + owner + ":" + nonce), until
	}
	canonical, _ := jsonbody.Canonical(p.Payload)
	sum := sha256.Sum256(canonical)
	return "payload:" + network + ":" + hex.EncodeToString(sum[:]), until
}

// resourceURL is the absolute URL of the request as the server saw it.
func resourceURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}
