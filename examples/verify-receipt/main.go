// Command verify-receipt checks a vouch receipt offline, against the public
// keys of the service that signed it, with no network: the receipt's
// schema, signature, key window, hashes and expiry, and, given the proof
// the service served for it, the log checkpoint's signature and the
// receipt's inclusion in the log. Given two checkpoints and a consistency
// proof instead, it checks that the log only grew between them. It prints
// each check and exits 0 when every check passes, 1 otherwise (2 for a
// usage error, or a file that holds an error answer of the server, an
// RFC 9457 problem, where a receipt, proof or checkpoint was expected).
//
//	go run ./examples/verify-receipt -key KEY receipt.json [-proof proof.json] [-input f | -input-text f] [-output f | -output-text f] [-allow-expired] [-at TIME]
//	go run ./examples/verify-receipt -keys FILE receipt.json ...
//	go run ./examples/verify-receipt -key KEY -old log1.json -new log2.json -consistency consistency.json
//
// KEY is the issuer's public key, or a file holding it: "ed25519:<base64url>"
// (the receipt's signing.issuer), bare base64 or base64url, 64 hex digits,
// or a PEM "PUBLIC KEY" block. -key may be repeated to trust several keys.
// -keys names a key file (see receipt.KeyFile; the server's -trusted-keys
// writes one): every key in it is trusted within its validity window.
// -input and -output name files holding the original input and output as
// JSON; -input-text and -output-text name files whose whole content, a
// final newline included, is the original as a string. Each is checked
// against the receipt's hashes.
// -allow-expired accepts a receipt whose ttl has passed; -at checks the
// receipt as of an RFC 3339 instant instead of now (its expiry, and that
// it was issued by then).
//
// -proof names the answer of GET /api/v4/receipt/{receipt_id}/proof; the
// checkpoint in it must be signed by a trusted key under the log's origin
// (the checkpoint's first line, or -log-origin), and the receipt's RFC 8785
// canonical form (the bytes as issued, whatever spelling the file holds:
// indented, or with a final newline) must be in the log. -old and -new name two
// checkpoints (signed note text, or the answer of GET /api/v4/log or of a
// proof, which hold one) and -consistency the answer of
// GET /api/v4/log/consistency?first=OLD_SIZE&second=NEW_SIZE.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
)

type keyList []string

func (k *keyList) String() string     { return strings.Join(*k, ",") }
func (k *keyList) Set(s string) error { *k = append(*k, s); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line.
type options struct {
	keys                         keyList
	keyFile                      string
	input, inputText             string
	output, outputText           string
	allowExpired                 bool
	at                           string
	proof, logOrigin             string
	oldCheckpoint, newCheckpoint string
	consistency                  string
	files                        []string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-receipt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.Var(&o.keys, "key", "trusted public key, or a file holding it (repeatable)")
	fs.StringVar(&o.keyFile, "keys", "", "key `FILE` of trusted keys with their validity windows (a receipt.KeyFile, as the server's -trusted-keys writes)")
	fs.StringVar(&o.input, "input", "", "`FILE` holding the original input as JSON")
	fs.StringVar(&o.inputText, "input-text", "", "`FILE` whose whole content, a final newline included, is the original input as a string")
	fs.StringVar(&o.output, "output", "", "`FILE` holding the original output as JSON")
	fs.StringVar(&o.outputText, "output-text", "", "`FILE` whose whole content, a final newline included, is the original output as a string\n(echo adds a newline; printf '%s' does not)")
	fs.BoolVar(&o.allowExpired, "allow-expired", false, "accept a receipt whose ttl has passed (audit)")
	fs.StringVar(&o.at, "at", "", "check the receipt as of `TIME` (RFC 3339), not now: its expiry, and that it was issued by then (audit)")
	fs.StringVar(&o.proof, "proof", "", "`FILE` holding the receipt's inclusion proof (GET /api/v4/receipt/{id}/proof)")
	fs.StringVar(&o.logOrigin, "log-origin", "", "the log's `NAME` the checkpoints must carry (default: the checkpoint's own first line)")
	fs.StringVar(&o.oldCheckpoint, "old", "", "`FILE` holding the older checkpoint, for -consistency")
	fs.StringVar(&o.newCheckpoint, "new", "", "`FILE` holding the newer checkpoint, for -consistency")
	fs.StringVar(&o.consistency, "consistency", "", "`FILE` holding a consistency proof (GET /api/v4/log/consistency) from -old to -new")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: verify-receipt -key KEY [flags] receipt.json")
		fmt.Fprintln(stderr, "       verify-receipt -key KEY -old CHECKPOINT -new CHECKPOINT -consistency PROOF")
		fs.PrintDefaults()
	}
	// Accept flags after the file name too: verify-receipt -key K r.json -input f.
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		o.files = append(o.files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	growth := o.consistency != "" || o.oldCheckpoint != "" || o.newCheckpoint != ""
	if m := missing(o, growth); m != "" {
		fmt.Fprintln(stderr, "verify-receipt: "+m)
		fs.Usage()
		return 2
	}
	trusted, err := trustedKeys(o)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var ok bool
	if growth {
		ok, err = checkGrowth(o, trusted, stdout)
	} else {
		ok, err = checkReceipt(o, trusted, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if !ok {
		fmt.Fprintln(stdout, "INVALID")
		return 1
	}
	fmt.Fprintln(stdout, "VALID")
	return 0
}

// checkReceipt verifies the receipt file, and its inclusion proof when
// -proof is given, printing each check.
func checkReceipt(o options, trusted []receipt.PublicKey, stdout io.Writer) (bool, error) {
	var opts []receipt.VerifierOption
	if o.allowExpired {
		opts = append(opts, receipt.WithExpiredUnsafe())
	}
	v, err := receipt.NewVerifier(trusted, opts...)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(o.files[0])
	if err != nil {
		return false, err
	}
	if err := errorAnswer(o.files[0], "a receipt", data); err != nil {
		return false, err
	}
	var orig receipt.Originals
	if orig.Input, err = original("input", o.input, o.inputText); err != nil {
		return false, err
	}
	if orig.Output, err = original("output", o.output, o.outputText); err != nil {
		return false, err
	}
	var proof *receipt.ProofResponse
	if o.proof != "" {
		if proof, err = readProof(o.proof); err != nil {
			return false, err
		}
	}

	now := time.Now()
	if o.at != "" {
		if now, err = time.Parse(time.RFC3339Nano, o.at); err != nil {
			return false, fmt.Errorf("-at: %w", err)
		}
	}
	res, verr := v.Verify(data, orig, now)
	if res.ReceiptID != "" {
		fmt.Fprintf(stdout, "receipt %s\n", res.ReceiptID)
	}
	for _, c := range res.Checks {
		detail := c.Detail
		if c.Name == receipt.CheckExpiry {
			detail = expiryDetail(c, res.ExpiresAt)
		}
		if c.Status == receipt.CheckFailed && res.Receipt != nil {
			switch {
			case c.Name == receipt.CheckInputHash && o.inputText != "":
				detail += textHint("-input-text", o.inputText, res.Receipt.TaskMeta.InputHash)
			case c.Name == receipt.CheckOutputHash && o.outputText != "":
				detail += textHint("-output-text", o.outputText, res.Receipt.TaskMeta.OutputHash)
			}
		}
		printCheck(stdout, string(c.Name), c.Status, detail)
		for _, fe := range c.Errors {
			fmt.Fprintf(stdout, "            - %s: %s\n", fe.Field, fe.Message)
		}
	}
	ok := verr == nil
	if proof != nil {
		ok = checkInclusion(o, trusted, data, proof, stdout) && ok
	}
	return ok, nil
}

// expiryDetail names the flag, not the Go option, that accepts an
// expired receipt.
func expiryDetail(c receipt.Check, expires time.Time) string {
	at := expires.UTC().Format("2006-01-02T15:04:05.000Z")
	switch c.Status {
	case receipt.CheckFailed:
		return "expired at " + at + "; -allow-expired accepts it for an audit"
	case receipt.CheckSkipped:
		if expires.IsZero() {
			return c.Detail
		}
		return "expired at " + at + "; accepted by -allow-expired"
	}
	return c.Detail
}

// checkInclusion checks the proof's checkpoint signature and the
// receipt's inclusion, printing both checks.
func checkInclusion(o options, trusted []receipt.PublicKey, data []byte, p *receipt.ProofResponse, stdout io.Writer) bool {
	cp, err := openCheckpoint(o, trusted, []byte(p.Checkpoint))
	if err != nil {
		printCheck(stdout, "checkpoint", receipt.CheckFailed, err.Error())
		printCheck(stdout, "inclusion", receipt.CheckSkipped, "no trusted checkpoint")
		return false
	}
	printCheck(stdout, "checkpoint", receipt.CheckPassed, fmt.Sprintf("%s, tree size %d, signed by a trusted key", cp.Origin, cp.Size))
	if p.TreeSize != cp.Size {
		printCheck(stdout, "inclusion", receipt.CheckFailed, fmt.Sprintf("the proof is for a tree of %d leaves, the checkpoint of %d", p.TreeSize, cp.Size))
		return false
	}
	if err := receipt.CheckInclusion(issuedBytes(data), p.LogIndex, p.InclusionProof, cp); err != nil {
		printCheck(stdout, "inclusion", receipt.CheckFailed, err.Error())
		return false
	}
	printCheck(stdout, "inclusion", receipt.CheckPassed, fmt.Sprintf("leaf %d of %d", p.LogIndex, cp.Size))
	return true
}

// checkGrowth checks -old and -new and the consistency proof between
// them, printing each check.
func checkGrowth(o options, trusted []receipt.PublicKey, stdout io.Writer) (bool, error) {
	var cps [2]receipt.Checkpoint
	ok := true
	for i, name := range []string{o.oldCheckpoint, o.newCheckpoint} {
		text, err := readCheckpoint(name)
		if err != nil {
			return false, err
		}
		label := [2]string{"old checkpoint", "new checkpoint"}[i]
		if cps[i], err = openCheckpoint(o, trusted, text); err != nil {
			printCheck(stdout, label, receipt.CheckFailed, err.Error())
			ok = false
			continue
		}
		printCheck(stdout, label, receipt.CheckPassed, fmt.Sprintf("%s, tree size %d", cps[i].Origin, cps[i].Size))
	}
	body, err := os.ReadFile(o.consistency)
	if err != nil {
		return false, err
	}
	if err := errorAnswer(o.consistency, "a consistency proof", body); err != nil {
		return false, err
	}
	var cr receipt.ConsistencyResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return false, fmt.Errorf("%s: not a consistency proof: %w", o.consistency, err)
	}
	if !ok {
		printCheck(stdout, "consistency", receipt.CheckSkipped, "no trusted checkpoints")
		return false, nil
	}
	if err := receipt.CheckConsistency(cps[0], cps[1], cr.Proof); err != nil {
		printCheck(stdout, "consistency", receipt.CheckFailed, err.Error())
		return false, nil
	}
	printCheck(stdout, "consistency", receipt.CheckPassed, fmt.Sprintf("the log of %d leaves extends the log of %d: it only grew", cps[1].Size, cps[0].Size))
	return true, nil
}

// openCheckpoint checks the signed checkpoint text against the note keys
// of the trusted keys under the log's origin.
func openCheckpoint(o options, trusted []receipt.PublicKey, text []byte) (receipt.Checkpoint, error) {
	origin := o.logOrigin
	if origin == "" {
		origin, _, _ = strings.Cut(string(text), "\n")
	}
	var vkeys []string
	for _, k := range trusted {
		if tk, ok := k.(receipt.TrustedKey); ok {
			k = tk.PublicKey
		}
		ek, ok := k.(receipt.Ed25519Key)
		if !ok {
			continue
		}
		if vkey, err := receipt.LogVerifierKey(origin, ek); err == nil {
			vkeys = append(vkeys, vkey)
		}
	}
	if len(vkeys) == 0 {
		return receipt.Checkpoint{}, fmt.Errorf("no trusted Ed25519 key can sign for the log %q", origin)
	}
	return receipt.OpenCheckpoint(text, vkeys...)
}

// issuedBytes returns the receipt of data as its issuer wrote it, and so
// as the log holds it: the RFC 8785 canonical form of data, a receipt in
// any spelling (a final newline, indented) or a JSON string holding one,
// as the receipt's checks read it. It returns data when data has no
// canonical form, which then proves nothing.
func issuedBytes(data []byte) []byte {
	text := bytes.TrimSpace(data)
	if len(text) > 0 && text[0] == '"' {
		var s string
		if json.Unmarshal(text, &s) != nil {
			return data
		}
		text = []byte(s)
	}
	v := jsontext.Value(bytes.Clone(text))
	if v.Canonicalize() != nil {
		return data
	}
	return v
}

func printCheck(w io.Writer, name string, status receipt.CheckStatus, detail string) {
	line := fmt.Sprintf("%-11s %s", name, status)
	if detail != "" {
		line += ": " + detail
	}
	fmt.Fprintln(w, line)
}

// readProof reads the answer of GET /api/v4/receipt/{id}/proof.
func readProof(name string) (*receipt.ProofResponse, error) {
	body, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if err := errorAnswer(name, "a proof", body); err != nil {
		return nil, err
	}
	return parseProof(body)
}

// parseProof decodes a proof answer; every member is required.
func parseProof(body []byte) (*receipt.ProofResponse, error) {
	var p struct {
		receipt.ProofResponse
		LogIndex *int64 `json:"log_index"`
		TreeSize *int64 `json:"tree_size"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not a proof (GET /api/v4/receipt/{id}/proof): %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a proof: data after the proof's object")
	}
	switch {
	case p.LogIndex == nil || *p.LogIndex < 0:
		return nil, errors.New("not a proof: log_index is missing or negative")
	case p.TreeSize == nil || *p.TreeSize <= *p.LogIndex:
		return nil, errors.New("not a proof: tree_size is missing or not above log_index")
	case p.Checkpoint == "":
		return nil, errors.New("not a proof: checkpoint is missing")
	case p.InclusionProof == nil: // the server writes [] for a proof of no hashes
		return nil, errors.New("not a proof: inclusion_proof is missing")
	}
	p.ProofResponse.LogIndex, p.ProofResponse.TreeSize = *p.LogIndex, *p.TreeSize
	return &p.ProofResponse, nil
}

// readCheckpoint reads a checkpoint: signed note text, or a JSON answer
// (of GET /api/v4/log or of a proof) holding one in "checkpoint".
func readCheckpoint(name string) ([]byte, error) {
	body, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return body, nil
	}
	if err := errorAnswer(name, "a checkpoint", body); err != nil {
		return nil, err
	}
	var v struct {
		Checkpoint string `json:"checkpoint"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Checkpoint == "" {
		return nil, fmt.Errorf("%s: JSON without a checkpoint member", name)
	}
	return []byte(v.Checkpoint), nil
}

// errorAnswer reports a file that holds an error answer of the server, an
// RFC 9457 problem, where want was expected: what `curl -s URL > FILE`
// writes when the request failed (a wrong key, an empty or unknown receipt
// id). Read as what was expected, it would fail every check, or prove
// nothing, without saying why; the server's status and detail name the
// request to fix. It returns nil for any other content.
func errorAnswer(name, want string, body []byte) error {
	var p problem.Details
	if json.Unmarshal(body, &p) != nil || p.Status < 400 || p.Title == "" {
		return nil
	}
	return fmt.Errorf("%s holds an error answer of the server, not %s: %v", name, want, &p)
}
