package audit

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// Broken names the first entry of a chain that does not verify.
type Broken struct {
	Seq    int64  // the entry's seq, or the one that was expected there
	Reason string // what is wrong
}

func (b *Broken) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d: %s", b.Seq, b.Reason)
}

// Head is an entry of a chain named by its seq and hash: the last entry
// of a tenant's chain (what `planwerk audit head` prints, for an auditor
// to keep elsewhere), or the last entry a purge removed (where the chain
// that is left starts).
type Head struct {
	Seq  int64
	Hash string
}

// Origin is the start of a chain from its first entry: seq 1 follows
// ZeroHash.
var Origin = Head{Seq: 0, Hash: ZeroHash}

// Verifier checks a tenant's entries, given oldest first, one at a time,
// so that a chain of any length is checked in constant memory. The first
// entry must follow Start: the chain's origin (seq 1 after ZeroHash), or
// the last entry a purge removed. An entry removed from the start of the
// chain, without a purge saying so, therefore breaks it as one removed
// from the middle does. Heads kept before (Expect) must still be reached.
// The zero Verifier checks a chain from its origin.
type Verifier struct {
	start    Head
	prevHash string
	nextSeq  int64
	count    int64
	// expect are heads kept before, by seq: each must be an entry of the
	// chain with that hash, or have been purged.
	expect map[int64]string
}

// NewVerifier returns a verifier of a chain that starts after start
// (Origin for a chain that was never purged).
func NewVerifier(start Head) *Verifier {
	if start.Hash == "" {
		start.Hash = ZeroHash
	}
	return &Verifier{start: start, prevHash: start.Hash, nextSeq: start.Seq + 1}
}

// Expect adds heads kept before: the chain must still reach each of them
// with the same hash (entries removed from its end, or an entry rewritten
// and every later one re-hashed, fail), unless a purge removed them.
func (v *Verifier) Expect(heads ...Head) {
	if v.expect == nil {
		v.expect = map[int64]string{}
	}
	for _, h := range heads {
		v.expect[h.Seq] = h.Hash
	}
}

// Next checks the next entry: its seq follows the one before without a
// gap (the first follows the start), its prevHash is that entry's hash,
// and its hash is what its content hashes to. It returns a *Broken for
// the first entry that fails.
func (v *Verifier) Next(e Entry) error {
	if v.nextSeq == 0 {
		// The zero Verifier checks a chain from its origin.
		v.start, v.prevHash, v.nextSeq = Origin, ZeroHash, 1
	}
	first := v.count == 0
	switch {
	case e.Seq != v.nextSeq && first && v.start.Seq == 0:
		return &Broken{Seq: v.nextSeq, Reason: fmt.Sprintf("the chain starts at seq %d, and no purge removed the entries before it", e.Seq)}
	case e.Seq != v.nextSeq && first:
		return &Broken{Seq: v.nextSeq, Reason: fmt.Sprintf("the last purge removed the entries up to seq %d, but the chain starts at seq %d", v.start.Seq, e.Seq)}
	case e.Seq != v.nextSeq:
		return &Broken{Seq: v.nextSeq, Reason: fmt.Sprintf("the entry of seq %d is missing (the next is seq %d)", v.nextSeq, e.Seq)}
	case e.PrevHash != v.prevHash && first && v.start.Seq == 0:
		return &Broken{Seq: e.Seq, Reason: "the first entry does not follow the zero hash"}
	case e.PrevHash != v.prevHash && first:
		return &Broken{Seq: e.Seq, Reason: "the first entry does not follow the last entry the purge removed"}
	case e.PrevHash != v.prevHash:
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
	if want, ok := v.expect[e.Seq]; ok && want != e.Hash {
		return &Broken{Seq: e.Seq, Reason: "the entry is not the one a head kept before names: the chain was rewritten from here on or before"}
	}
	v.prevHash, v.nextSeq = e.Hash, e.Seq+1
	v.count++
	return nil
}

// End checks, once every entry has been given, that the chain reached
// every head kept before: one beyond its last entry means entries were
// removed from its end. A head the purge removed is checked against the
// purge's own record where they meet, and not at all before it.
func (v *Verifier) End() error {
	last := v.nextSeq - 1
	for _, seq := range slices.Sorted(maps.Keys(v.expect)) {
		want := v.expect[seq]
		switch {
		case seq == v.start.Seq && want != v.start.Hash:
			return &Broken{Seq: seq, Reason: "the last entry the purge removed is not the one a head kept before names"}
		case seq > last:
			return &Broken{Seq: last + 1, Reason: fmt.Sprintf("the chain ends at seq %d, before a head kept before (seq %d): entries were removed from its end", last, seq)}
		}
	}
	return nil
}

// Count is how many entries verified.
func (v *Verifier) Count() int64 { return v.count }

// Last is the head of the entries verified: the start while there were
// none.
func (v *Verifier) Last() Head { return Head{Seq: v.nextSeq - 1, Hash: v.prevHash} }

// Pages reads a tenant's entries after seq after, oldest first, at most
// limit of them, and calls fn with each: a store's read of the log.
type Pages func(ctx context.Context, after int64, limit int, fn func(Entry) error) error

// Walk gives v the entries read reads, a page of at most page entries at
// a time (each page a read of its own: no read stays open for a whole
// chain), then checks its end. It reads from the chain's first entry
// kept, whatever the start says, so that an entry left or put below the
// start breaks the chain too. It returns the seq of the first entry read
// (0: none) with v's verdict.
func Walk(ctx context.Context, v *Verifier, read Pages, page int) (first int64, err error) {
	var after int64
	for {
		n := 0
		err := read(ctx, after, page, func(e Entry) error {
			if n++; first == 0 {
				first = e.Seq
			}
			after = e.Seq
			return v.Next(e)
		})
		if err != nil {
			return first, err
		}
		if n < page {
			return first, v.End()
		}
	}
}
