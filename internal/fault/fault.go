// Package fault names the failures of the parts Planwerk depends on: a
// database or file store that cannot be reached or answers too slowly,
// and storage that is full. The packages that talk to those parts mark
// their errors with it; the HTTP edge answers such errors with 503 (and
// Retry-After) or 507, never with 500.
package fault

import (
	"errors"
	"syscall"
)

// Part is a dependency of the service.
type Part string

// The parts a request may wait on. Redis is not among them: it only
// accelerates rate counting, and its failures never reach a client.
const (
	Database  Part = "database"
	FileStore Part = "file store"
	// Disk is the local disk of the process (temporary files).
	Disk Part = "local disk"
)

// Error is a failure of a dependency rather than of the request.
type Error struct {
	Part Part
	// Full: the part is out of space; otherwise it is unreachable or too slow.
	Full bool
	Err  error
}

func (e *Error) Error() string {
	if e.Full {
		return string(e.Part) + " full: " + e.Err.Error()
	}
	return string(e.Part) + " unavailable: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Unavailable marks err as the part being unreachable or too slow. An
// error already marked keeps its mark; nil stays nil.
func Unavailable(p Part, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := As(err); ok {
		return err
	}
	return &Error{Part: p, Err: err}
}

// Full marks err as the part having no room left.
func Full(p Part, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Part: p, Full: true, Err: err}
}

// As returns the mark of err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// NoSpace reports whether err says a disk or quota is full.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
