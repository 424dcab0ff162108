package audit

import "fmt"

// Broken names the first entry of a chain that does not verify.
type Broken struct {
	Seq    int64  // the entry's seq, or the one that was expected there
	Reason string // what is wrong
}

func (b *Broken) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d: %s", b.Seq, b.Reason)
}

// Verifier checks a tenant's entries, given oldest first, one at a time,
// so that a chain of any length is checked in constant memory. The first
// entry it sees may be the oldest one kept after a purge: its prevHash is
// taken as it is, except that the chain's first entry (seq 1) must follow
// ZeroHash.
type Verifier struct {
	prevHash string
	nextSeq  int64
	count    int64
}

// Next checks the next entry: its seq follows the one before without a
// gap, its prevHash is that entry's hash, and its hash is what its content
// hashes to. It returns a *Broken for the first entry that fails.
func (v *Verifier) Next(e Entry) error {
	switch {
	case v.count == 0 && e.Seq == 1 && e.PrevHash != ZeroHash:
		return &Broken{Seq: e.Seq, Reason: "the first entry does not follow the zero hash"}
	case v.count == 0 && e.Seq < 1:
		return &Broken{Seq: e.Seq, Reason: "seq is not positive"}
	case v.count > 0 && e.Seq != v.nextSeq:
		return &Broken{Seq: v.nextSeq, Reason: fmt.Sprintf("the entry of seq %d is missing (the next is seq %d)", v.nextSeq, e.Seq)}
	case v.count > 0 && e.PrevHash != v.prevHash:
		return &Broken{Seq: e.Seq, Reason: "prevHash is not the hash of the entry before"}
	}
	// Stored documents are canonical JSON already: only when that hash
	// differs are they made canonical, to tell a document stored in
	// another form from one changed.
	if sealed(e) != e.Hash {
		h, err := HashOf(e)
		if err != nil {
			return &Broken{Seq: e.Seq, Reason: err.Error()}
		}
		if h != e.Hash {
			return &Broken{Seq: e.Seq, Reason: "the entry's content does not hash to its hash"}
		}
	}
	v.prevHash, v.nextSeq = e.Hash, e.Seq+1
	v.count++
	return nil
}

// Count is how many entries verified.
func (v *Verifier) Count() int64 { return v.count }
