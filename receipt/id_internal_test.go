package receipt

import "testing"

// TestValidID checks the shape of an id: NewID's, and nothing else, not
// even one whose line breaks the decoder would skip.
func TestValidID(t *testing.T) {
	id := NewID()
	if !ValidID(id) {
		t.Errorf("ValidID(%q) = false for a new id", id)
	}
	for _, s := range []string{
		id[:len(id)-2] + "\r\n",
		id[:len(id)-2] + "\n\n",
		id[:7] + "\r\n" + id[7:len(id)-2],
		id + "a",
		id[:len(id)-1],
		"rcpt-" + id[len(IDPrefix):],
		IDPrefix + "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	} {
		if ValidID(s) {
			t.Errorf("ValidID(%q) = true", s)
		}
	}
}
