package main

import (
	"context"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// withReputation adds to the engine's and the service's options those of
// variant rep: reputation off (router.WithReputation(nil) and
// trust.WithoutReputation(), today's behaviour) or on, learned online in a fresh book over an in-memory
// store with the options opts (zero fields: the defaults). With reputation on, p learns that the
// engine learns from every step, and plans a weighted step's early quorum
// with the reliabilities the book holds, which the engine read for the
// step: calls run one at a time, and the engine learns from a call before
// it returns.
func withReputation(p *panel, rep variant, opts reputation.Options, engine []router.EngineOption, svc []trust.Option) ([]router.EngineOption, []trust.Option, error) {
	if rep == off {
		return append(engine, router.WithReputation(nil)), append(svc, trust.WithoutReputation()), nil
	}
	book, err := reputation.New(nil, opts)
	if err != nil {
		return nil, nil, err
	}
	p.learns, p.book = true, book
	p.decide = func(job *router.Job, sessions []router.SessionID) (consensus.Aggregator, error) {
		ids := make([]int64, len(sessions))
		for i, s := range sessions {
			ids[i] = int64(s)
		}
		var claimType string
		if job.Claim != nil {
			claimType = job.Claim.Type
		}
		rel, err := book.Reliabilities(context.Background(), router.Scope(job.Kind, claimType), ids)
		if err != nil {
			return nil, err
		}
		return consensus.Weighted{Reliabilities: rel, Launched: ids}, nil
	}
	return append(engine, router.WithReputation(book)), svc, nil
}
