package app

import "planwerk/internal/auth"

// Option changes how NewService builds the service, for what no setting
// of an operator's may change.
type Option func(*options)

type options struct {
	hashCost auth.HashCost
}

func newOptions(opts []Option) options {
	o := options{hashCost: auth.DefaultHashCost}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithHashCost makes the service hash new passwords at cost c instead of
// auth.DefaultHashCost. Tests take a low cost, so that the many users
// they create stay quick; the service itself always runs at the default.
func WithHashCost(c auth.HashCost) Option {
	return func(o *options) { o.hashCost = c }
}
