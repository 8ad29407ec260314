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

// identityKeys returns the keys Identify reads for session: the count
// of identities recorded for it (changesKey), the record of identity,
// which reads that count when identity is the one recorded last, and
// the two records a former version kept under the session itself, which
// DeleteSessions deleted with it: whether any identity was recorded,
// then whether identity was.
func identityKeys(session int64, identity string) [4]Key {
	sum := sha256.Sum256([]byte(identity))
	hash := hex.EncodeToString(sum[:16])
	return [4]Key{
		changesKey(session),
		{Session: PanelSession, Operation: identityOperation, Kind: strconv.FormatInt(session, 10) + " " + hash},
		{Session: session, Operation: identityOperation},
		{Session: session, Operation: identityOperation, Kind: hash},
	}
}

// Identify records identity as what answers for session, a description
// of its worker (a model and the endpoint that serves it, say), and
// reports whether b had recorded another one. When it had, the session
// changed: b forgets everything it learned of the session, in every
// scope (its records at every level, against the other votes and of its
// confidence slopes, as [Book.Forget] does in one scope), so that it
// reads as a session never seen. The first identity recorded for a
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
// they identify it at once, provided the store is a [ConditionalStore].
// A server identifying another worker at once finds a change too: the
// identities are records of the panel, which forgetting leaves, and the
// new one is recorded before the session is forgotten, with AddIf on a
// record that counts the identities recorded, so that the session is
// never without one and each change is claimed once. A session
// identified by a former version, which kept its identity among the
// session's own records, is read as it was. Calls that teach while it
// forgets may land before or after, and a report that arrives later on
// a call the former worker answered (by its receipt) teaches the
// session as it is now. When recording the new identity or forgetting
// fails, Identify returns the error with changed true and withdraws the
// new identity, which a store that failed may have recorded all the
// same (an answer lost as its transaction commits), so that the next
// Identify of the new worker, on any server, finds the change again.
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
		recs, err := b.store.Load(ctx, keys[:])
		if err != nil {
			return false, err
		}
		count, former := recs[0].Right, recs[2].Right > 0
		var same bool
		if former { // recorded by a former version, under the session
			changed, same = true, recs[3].Right > 0
		} else {
			changed, same = count > 0, count > 0 && recs[1].Right == count
		}
		if same {
			return false, nil
		}
		d, ok := b.store.(SessionDeleter)
		if changed && !ok {
			return true, fmt.Errorf("reputation: session %d has a new worker, and the store cannot forget it: %w", session, errors.ErrUnsupported)
		}
		// Record identity before forgetting, so that the session is
		// never without one: the count moves by one and identity's
		// record is set to it, where a former identity's no longer
		// reads it. These are the panel's records, which forgetting
		// leaves; a former version's are withdrawn with them. No
		// horizon: a count held at one would stop moving.
		deltas := []Delta{
			{Key: keys[0], Delta: Record{Right: 1}},
			{Key: keys[1], Delta: Record{Right: -MaxCount}},
			{Key: keys[1], Delta: Record{Right: count + 1}},
		}
		if former {
			deltas = append(deltas, Delta{Key: keys[2], Delta: Record{Right: -MaxCount}})
		}
		// Withdrawing the new identity, when the session is not
		// forgotten, makes the next Identify find the change again.
		undo := func(err error) (bool, error) {
			if !changed {
				return false, err
			}
			withdraw := []Delta{{Key: keys[1], Delta: Record{Right: -MaxCount}}}
			return true, errors.Join(err, b.store.Add(context.WithoutCancel(ctx), 0, withdraw))
		}
		// A store that fails to record the identity may have recorded
		// it all the same (an answer lost as it commits): it is
		// withdrawn as when forgetting fails.
		if conditional {
			// Claim the change, so that of the servers finding it at
			// once one forgets the session: the count moves only from
			// what was read.
			claimed, err := cs.AddIf(ctx, 0, keys[0], recs[0], deltas)
			if err != nil {
				return undo(err)
			}
			if !claimed {
				continue // another server recorded one: read again
			}
		} else if err := b.store.Add(ctx, 0, deltas); err != nil {
			return undo(err)
		}
		if !changed {
			return false, nil
		}
		if err := d.DeleteSessions(ctx, []int64{session}); err != nil {
			return undo(err)
		}
		return true, nil
	}
	return false, fmt.Errorf("reputation: session %d: other servers recorded %d identities while this one read them", session, identifyTries)
}

// identifyTries bounds the rounds of Identify on a ConditionalStore:
// each round lost is an identity another server recorded.
const identifyTries = 16

// changesKey is the record of the panel that counts, in Right, the
// identities of the worker behind session that servers recorded (see
// Book.Identify; a former version counted the changes alone), added
// with no horizon so that every claim moves it: forgetting the session
// leaves it, so that a server that read it before another claimed a
// change never claims that change again.
func changesKey(session int64) Key {
	return Key{Session: PanelSession, Operation: identityOperation, Kind: strconv.FormatInt(session, 10)}
}
