package audit

import "context"

// Source is who makes the changes of a request or command, and why: what
// every audit entry they make records besides the change itself.
type Source struct {
	Actor     Actor
	RequestID string // "" for none
	Reason    string // "" for none
}

type sourceKey struct{}

// WithSource returns ctx carrying src: the store records it on every
// entry of the writes made with that ctx, those done on behalf of
// another included.
func WithSource(ctx context.Context, src Source) context.Context {
	return context.WithValue(ctx, sourceKey{}, src)
}

// SourceOf returns the source ctx carries; without one, an API change
// of no known actor.
func SourceOf(ctx context.Context) Source {
	if src, ok := ctx.Value(sourceKey{}).(Source); ok {
		return src
	}
	return Source{Actor: Actor{Via: ViaAPI}}
}

// Entry returns an entry of the source, without what the change adds.
func (s Source) Entry() Entry {
	e := Entry{Actor: s.Actor}
	if e.Actor.Via == "" {
		e.Actor.Via = ViaAPI
	}
	if s.RequestID != "" {
		id := s.RequestID
		e.RequestID = &id
	}
	if s.Reason != "" {
		r := s.Reason
		e.Reason = &r
	}
	return e
}
