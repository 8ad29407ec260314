package boltstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/receipt"
)

// FuzzDecode reads any stored value, as a damaged or foreign database
// file holds it: decode never panics; it returns an error naming the
// record and no record, or a record that shares no memory with the
// value and that encode writes back to a value decode reads as the same
// record.
func FuzzDecode(f *testing.F) {
	idx := int64(7)
	for _, m := range []meta{
		{Owner: "alice", Visibility: receipt.VisibilityPrivate, ExpiresAt: 1_700_000_000_000_000, LogIndex: &idx},
		{Owner: "bob", Visibility: receipt.VisibilityShared, Counterparties: []string{"carol"}, ExpiresAt: -1},
	} {
		val, err := encode(m, []byte(`{"receipt":1}`))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(val)
	}
	f.Add([]byte{formatVersion, 2, '{', '}'})
	f.Add([]byte{formatVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{formatVersion, 5, '{', '}'})
	f.Add([]byte{2, 2, '{', '}', 'x'})
	f.Fuzz(func(t *testing.T, val []byte) {
		const id = "r-1"
		rec, err := decode(id, bytes.Clone(val))
		if err != nil {
			if !strings.Contains(err.Error(), "record "+id) {
				t.Errorf("decode(%q) = %v, an error that does not name the record", val, err)
			}
			if !cmp.Equal(rec, receipt.Record{}) {
				t.Errorf("decode(%q) = %+v and an error", val, rec)
			}
			return
		}
		kept := bytes.Clone(rec.Data)
		mutated := bytes.Clone(val)
		got, _ := decode(id, mutated)
		clear(mutated)
		if !bytes.Equal(got.Data, kept) {
			t.Fatalf("decode(%q): the record's data changed with the value", val)
		}
		m := meta{Owner: rec.Owner, Visibility: rec.Visibility, Counterparties: rec.Counterparties, ExpiresAt: rec.ExpiresAt.UnixMicro()}
		if rec.LogIndex != -1 {
			m.LogIndex = &rec.LogIndex
		}
		again, err := encode(m, rec.Data)
		if err != nil {
			t.Fatalf("decode(%q) = %+v, which encode refuses: %v", val, rec, err)
		}
		back, err := decode(id, again)
		if err != nil {
			t.Fatalf("decode(%q) = %+v, encoded as %q, which decode refuses: %v", val, rec, again, err)
		}
		if diff := cmp.Diff(rec, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("decode(%q), encoded and decoded again (-first +again):\n%s", val, diff)
		}
	})
}
