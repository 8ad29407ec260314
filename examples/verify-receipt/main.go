// Command verify-receipt checks a vouch receipt offline, against the public
// key of the service that signed it, and exits 0 when every check passes
// and 1 otherwise (2 for a usage error).
//
//	go run ./examples/verify-receipt -key KEY receipt.json [-input f | -input-text f] [-output f | -output-text f]
//	go run ./examples/verify-receipt -keys FILE receipt.json ...
//
// KEY is the issuer's public key, or a file holding it: "ed25519:<base64url>"
// (the receipt's signing.issuer), bare base64 or base64url, 64 hex digits,
// or a PEM "PUBLIC KEY" block. -key may be repeated to trust several keys.
// -keys names a key file (see receipt.KeyFile; the server's -trusted-keys
// writes one): every key in it is trusted within its validity window.
// -input and -output name files holding the original input and output as
// JSON; -input-text and -output-text name files whose whole content is the
// original as a string. Each is checked against the receipt's hashes.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

type keyList []string

func (k *keyList) String() string     { return strings.Join(*k, ",") }
func (k *keyList) Set(s string) error { *k = append(*k, s); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-receipt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var keys keyList
	fs.Var(&keys, "key", "trusted public key, or a file holding it (repeatable)")
	keyFile := fs.String("keys", "", "key `FILE` of trusted keys with their validity windows (a receipt.KeyFile, as the server's -trusted-keys writes)")
	input := fs.String("input", "", "file holding the original input as JSON")
	inputText := fs.String("input-text", "", "file whose content is the original input as a string")
	output := fs.String("output", "", "file holding the original output as JSON")
	outputText := fs.String("output-text", "", "file whose content is the original output as a string")
	allowExpired := fs.Bool("allow-expired", false, "accept a receipt whose ttl has passed (audit)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: verify-receipt -key KEY [flags] receipt.json")
		fs.PrintDefaults()
	}
	// Accept flags after the file name too: verify-receipt -key K r.json -input f.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 || (len(keys) == 0 && *keyFile == "") {
		fs.Usage()
		return 2
	}

	trusted := make([]receipt.PublicKey, 0, len(keys))
	if *keyFile != "" {
		f, err := receipt.ReadKeyFile(*keyFile)
		if err == nil {
			trusted, err = f.Trusted()
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	for _, k := range keys {
		key, err := readKey(k)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		trusted = append(trusted, key)
	}
	var opts []receipt.VerifierOption
	if *allowExpired {
		opts = append(opts, receipt.WithExpiredUnsafe())
	}
	v, err := receipt.NewVerifier(trusted, opts...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var orig receipt.Originals
	if orig.Input, err = original(*input, *inputText); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if orig.Output, err = original(*output, *outputText); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}

	res, err := v.Verify(data, orig, time.Now())
	if res.ReceiptID != "" {
		fmt.Fprintf(stdout, "receipt %s\n", res.ReceiptID)
	}
	for _, c := range res.Checks {
		line := fmt.Sprintf("%-11s %s", c.Name, c.Status)
		if c.Detail != "" {
			line += ": " + strings.Replace(c.Detail, "WithExpiredUnsafe", "-allow-expired", 1) // the flag the user typed
		}
		fmt.Fprintln(stdout, line)
		for _, fe := range c.Errors {
			fmt.Fprintf(stdout, "            - %s: %s\n", fe.Field, fe.Message)
		}
	}
	if err != nil {
		fmt.Fprintln(stdout, "INVALID")
		return 1
	}
	fmt.Fprintln(stdout, "VALID")
	return 0
}

// readKey reads a key given inline or as a file name.
func readKey(s string) (receipt.Ed25519Key, error) {
	if b, err := os.ReadFile(s); err == nil {
		s = string(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return receipt.ParseEd25519Key(s)
}

// original reads the file of -input (JSON) or -input-text (a string); nil
// when neither is given.
func original(jsonFile, textFile string) (json.RawMessage, error) {
	switch {
	case jsonFile != "" && textFile != "":
		return nil, errors.New("give the JSON form or the text form of an original, not both")
	case jsonFile != "":
		b, err := os.ReadFile(jsonFile)
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%s is not JSON; use the -text flag for plain text", jsonFile)
		}
		return b, nil
	case textFile != "":
		b, err := os.ReadFile(textFile)
		if err != nil {
			return nil, err
		}
		return json.Marshal(string(b))
	}
	return nil, nil
}
