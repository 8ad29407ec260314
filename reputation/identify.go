package reputation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// identityOperation is the operation of the records that name the
// worker behind a session (see Book.Identify). It holds a space, which
// no operation's name does.
const identityOperation = "worker identity"

// identityKeys returns the keys Identify reads for session: whether any
// identity was recorded for it, then whether identity was.
func identityKeys(session int64, identity string) [2]Key {
	sum := sha256.Sum256([]byte(identity))
	return [2]Key{
		{Session: session, Operation: identityOperation},
		{Session: session, Operation: identityOperation, Kind: hex.EncodeToString(sum[:16])},
	}
}

// Identify records identity as what answers for session, a description
// of its worker (a model and the endpoint that serves it, say), and
// reports whether b had recorded another one. When it had, the session
// changed: b first forgets everything it learned of the session, in
// every scope (its records at every level, against the other votes and
// of its confidence slopes, as [Book.Forget] does in one scope), so that
// it reads as a session never seen. The first identity recorded for a
// session, or the same one again, changes nothing.
//
// A host calls it for each session before the session's first call,
// whenever it starts: a server whose panel file now names another model
// behind a session forgets that session, where a record would otherwise
// lead on the old model's outcomes for hundreds of calls
// (docs/ACCURACY.md, A panel that changes). Only a hash of identity is
// kept; an empty one is refused (ErrInvalid). Forgetting needs a store
// that is a [SessionDeleter]; with another, Identify reports the change
// with an error wrapping errors.ErrUnsupported and records nothing.
//
// Servers sharing b's store agree: the first to identify a session anew
// forgets it, and the others find the new identity recorded, also when
// they identify it at once, provided the store is a [ConditionalStore]
// (the change is claimed with AddIf on a record of the panel that
// counts the session's changes). Calls that
// teach while it forgets may land before or after, and a report that
// arrives later on a call the former worker answered (by its receipt)
// teaches the session as it is now. When forgetting fails, Identify
// returns the error with changed true and withdraws the new identity it
// recorded, so that the next Identify of the new worker finds the
// change again.
func (b *Book) Identify(ctx context.Context, session int64, identity string) (changed bool, err error) {
	if err := CheckSessions([]int64{session}); err != nil {
		return false, err
	}
	if identity == "" {
		return false, fmt.Errorf("%w: session %d: an empty identity names no worker", ErrInvalid, session)
	}
	keys := identityKeys(session, identity)
	cs, conditional := b.store.(ConditionalStore)
	for range identifyTries {
		recs, err := b.store.Load(ctx, []Key{keys[0], keys[1], changesKey(session)})
		if err != nil {
			return false, err
		}
		if recs[1].Right > 0 { // this identity, recorded before
			return false, nil
		}
		changed = recs[0].Right > 0
		if !changed {
			break
		}
		d, ok := b.store.(SessionDeleter)
		if !ok {
			return true, fmt.Errorf("reputation: session %d has a new worker, and the store cannot forget it: %w", session, errors.ErrUnsupported)
		}
		if conditional {
			// Claim the change, so that of the servers finding it at
			// once one forgets the session: the count of its changes,
			// a record of the panel that forgetting leaves, moves only
			// from what was read, and the new identity is recorded
			// with it for the others to find. No horizon: a count
			// held at one would stop moving, and a server that read
			// it before would claim the same change again.
			claimed, err := cs.AddIf(ctx, 0, changesKey(session), recs[2], []Delta{
				{Key: changesKey(session), Delta: Record{Right: 1}},
				{Key: keys[1], Delta: Record{Right: 1}},
			})
			if err != nil {
				return false, err
			}
			if !claimed {
				continue // another server claimed it: read again
			}
		}
		if err := d.DeleteSessions(ctx, []int64{session}); err != nil {
			if conditional {
				// Withdraw the new identity the claim recorded, so that
				// the next Identify finds the change again and forgets.
				undo := []Delta{{Key: keys[1], Delta: Record{Right: -1}}}
				err = errors.Join(err, b.store.Add(context.WithoutCancel(ctx), b.opts.Horizon, undo))
			}
			return true, err
		}
		break
	}
	one := Record{Right: 1}
	return changed, b.store.Add(ctx, b.opts.Horizon, []Delta{{Key: keys[0], Delta: one}, {Key: keys[1], Delta: one}})
}

// identifyTries bounds the rounds of Identify on a ConditionalStore:
// each round lost is a change of identity another server claimed.
const identifyTries = 16

// changesKey is the record of the panel that counts, in Right, the
// changes of the worker behind session that servers claimed (see
// Book.Identify), added with no horizon so that every claim moves it:
// forgetting the session leaves it, so that a server that read it
// before another claimed a change never claims that change again.
func changesKey(session int64) Key {
	return Key{Session: PanelSession, Operation: identityOperation, Kind: strconv.FormatInt(session, 10)}
}
