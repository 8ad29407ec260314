package main

import (
	"errors"
	"flag"

	"github.com/vouchkit/vouch/receipt"
)

// defaultLogOrigin names the receipts' log when -log-origin is not given.
const defaultLogOrigin = "localhost/vouch/receipts"

// logFlags registers the flags of the receipts' transparency log.
func logFlags(fs *flag.FlagSet, cfg *config) {
	fs.StringVar(&cfg.logOrigin, "log-origin", defaultLogOrigin,
		"`NAME` of the receipts' transparency log: the first line of its checkpoints and the name of its note key (use a name of your own, without white space or '+', such as example.com/vouch/receipts)")
}

// receiptLog returns the transparency log of the receipt store, whose
// checkpoints the receipts' current key signs. Every store the server
// uses (memory, bbolt, PostgreSQL) keeps one.
func receiptLog(cfg config, store receipt.Store, key *signingKey) (*receipt.Log, error) {
	lr, ok := store.(receipt.LogReader)
	if !ok {
		return nil, errors.New("the receipt store keeps no log")
	}
	l, err := receipt.NewLog(cfg.logOrigin, key.signer, lr)
	if err != nil {
		return nil, errors.New("-log-origin: " + err.Error())
	}
	return l, nil
}
