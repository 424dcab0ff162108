package ratelimit

import (
	"context"
	"sync"
)

// Policy is a rate limit as an answer shows it to the client: the name of
// the policy and the state the request left its bucket in. The name is
// the client's to read; it carries no part of the key.
type Policy struct {
	Name string
	State
}

// Report gathers the policies that one request met, for the answer's
// RateLimit fields, where the code that counts is far from the code that
// answers (the login brake runs inside the grants). It is safe for
// concurrent use.
type Report struct {
	mu       sync.Mutex
	policies []Policy
}

type reportKey struct{}

// WithReport returns ctx carrying a new, empty Report, and the Report.
func WithReport(ctx context.Context) (context.Context, *Report) {
	r := &Report{}
	return context.WithValue(ctx, reportKey{}, r), r
}

// Note records the state of the named policy in ctx's Report; without a
// Report it does nothing. A policy noted again keeps its place and takes
// the newer state, so that what the answer shows is the state the
// request left behind (after a refund or a reset, say).
func Note(ctx context.Context, name string, s State) {
	r, ok := ctx.Value(reportKey{}).(*Report)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.policies {
		if r.policies[i].Name == name {
			r.policies[i].State = s
			return
		}
	}
	r.policies = append(r.policies, Policy{Name: name, State: s})
}

// Policies returns the policies noted, in the order first noted.
func (r *Report) Policies() []Policy {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Policy(nil), r.policies...)
}
