// Package feed serves the change feed (CONTRACT.md "Change feed and
// webhooks"): every change the store's outbox recorded, in commit order,
// after an opaque cursor, as the caller may see it.
package feed

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/store"
)

// Bounds of a read.
const (
	DefaultLimit = 1000
	MaxLimit     = 10000
	MaxWait      = 30 * time.Second
	// poll is how often a waiting read looks for changes other instances
	// committed; changes of this instance wake it at once.
	poll = 500 * time.Millisecond
	// scanMax bounds the changes one read looks at, in pages.
	scanMax = 4
)

// Entry is a change as the feed and webhooks show it.
type Entry struct {
	Cursor   string          `json:"cursor"`
	Resource string          `json:"resource"`
	ID       int64           `json:"id"`
	Op       string          `json:"op"`
	At       string          `json:"at"`
	Record   json.RawMessage `json:"record"`
}

// EntryOf is the change as clients see it: no record for a delete.
func EntryOf(c store.Change) Entry {
	e := Entry{Cursor: Cursor(c.Seq), Resource: c.Resource, ID: c.RecordID, Op: c.Op, At: c.At, Record: json.RawMessage("null")}
	if c.Op != store.OpDelete {
		e.Record = json.RawMessage(c.Doc)
	}
	return e
}

// Page is one read of the feed.
type Page struct {
	Changes []Entry `json:"changes"`
	Next    string  `json:"next"`
}

// Cursor encodes a feed position. Opaque to clients: the form may change.
func Cursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("c1:" + strconv.FormatInt(seq, 10)))
}

// ParseCursor decodes a cursor; anything else is a 400.
func ParseCursor(s string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	rest, ok := strings.CutPrefix(string(b), "c1:")
	seq, perr := strconv.ParseInt(rest, 10, 64)
	if err != nil || !ok || perr != nil || seq < 0 {
		return 0, errs.Field("after", "must be a cursor the feed returned")
	}
	return seq, nil
}

// Store is what the feed needs of the database.
type Store interface {
	ChangesAfter(ctx context.Context, tenantID, after int64, resources []string, limit int) ([]store.Change, error)
	ChangeWindow(ctx context.Context, tenantID int64) (last, purged int64, err error)
	ChangeSignal() <-chan struct{}
}

// Visibility says whether the caller may read a record of a resource.
type Visibility func(ctx context.Context, caller auth.Principal, resource string, doc []byte) (bool, error)

// Service reads the feed.
type Service struct {
	db        Store
	visible   Visibility
	resources []string // the names a resources filter may use
	lag       func(time.Duration)
}

// New returns a Service; resources are the names of the feed's
// resources; lag (may be nil) learns how long after its commit each
// change is handed out.
func New(db Store, visible Visibility, resources []string, lag func(time.Duration)) *Service {
	if lag == nil {
		lag = func(time.Duration) {}
	}
	return &Service{db: db, visible: visible, resources: resources, lag: lag}
}

// Request is a read of the feed as a client asks for it.
type Request struct {
	After     string
	Limit     int
	Resources []string
	Wait      time.Duration
}

// Read returns the changes after the cursor, waiting up to r.Wait for
// the first when there are none.
func (s *Service) Read(ctx context.Context, caller auth.Principal, r Request) (Page, error) {
	if err := s.check(&r); err != nil {
		return Page{}, err
	}
	after, err := s.start(ctx, caller.TenantID, r.After)
	if err != nil {
		return Page{}, err
	}
	deadline := time.Now().Add(r.Wait)
	for {
		// Take the signal before reading: a commit after the read wakes us.
		signal := s.db.ChangeSignal()
		page, last, err := s.page(ctx, caller, after, r)
		if err != nil {
			return Page{}, err
		}
		if len(page.Changes) > 0 || !time.Now().Before(deadline) {
			return page, nil
		}
		after = last // changes the caller may not see were passed over
		timer := time.NewTimer(min(poll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			// The request's deadline came first: what was read is the answer.
			timer.Stop()
			return page, nil
		case <-signal:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func (s *Service) check(r *Request) error {
	var problems []errs.Problem
	switch {
	case r.Limit == 0:
		r.Limit = DefaultLimit
	case r.Limit < 1 || r.Limit > MaxLimit:
		problems = append(problems, errs.Problem{Field: "limit", Message: fmt.Sprintf("must be 1 to %d", MaxLimit)})
	}
	if r.Wait < 0 || r.Wait > MaxWait {
		problems = append(problems, errs.Problem{Field: "wait", Message: "must be 0 to 30 seconds"})
	}
	for _, name := range r.Resources {
		if !slices.Contains(s.resources, name) {
			problems = append(problems, errs.Problem{Field: "resources", Message: fmt.Sprintf("%q is not a resource of the feed", name)})
		}
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}

// start is the position to read after: the cursor's, or before the
// oldest kept change. A cursor older than the kept changes → 410.
func (s *Service) start(ctx context.Context, tenantID int64, cursor string) (int64, error) {
	last, purged, err := s.db.ChangeWindow(ctx, tenantID)
	if err != nil {
		return 0, err
	}
	if cursor == "" {
		return purged, nil
	}
	after, err := ParseCursor(cursor)
	if err != nil {
		return 0, err
	}
	if after < purged {
		return 0, errs.New(errs.Gone, "cursor_expired",
			"the changes after this cursor are no longer kept: list the records again and follow the feed from its start")
	}
	if after > last {
		return 0, errs.Field("after", "must be a cursor the feed returned")
	}
	return after, nil
}

// page reads one page: at most r.Limit changes the caller may see, and
// the position of the last change read (seen or not).
func (s *Service) page(ctx context.Context, caller auth.Principal, after int64, r Request) (Page, int64, error) {
	page := Page{Changes: []Entry{}, Next: Cursor(after)}
	last := after
	// A member's read passes over changes it may not see; scanning stops
	// after a bounded number, and the cursor keeps the progress.
	for scanned := 0; len(page.Changes) < r.Limit && scanned < scanMax*r.Limit; {
		want := r.Limit - len(page.Changes)
		batch, err := s.db.ChangesAfter(ctx, caller.TenantID, last, r.Resources, want)
		scanned += len(batch)
		if err != nil {
			return Page{}, 0, err
		}
		for _, c := range batch {
			last = c.Seq
			ok, err := s.visible(ctx, caller, c.Resource, c.Doc)
			if err != nil {
				return Page{}, 0, err
			}
			if ok {
				page.Changes = append(page.Changes, EntryOf(c))
				if at, err := time.Parse(store.TimeFormat, c.At); err == nil {
					s.lag(time.Since(at))
				}
			}
		}
		page.Next = Cursor(last)
		if len(batch) < want {
			break // the end of the feed
		}
	}
	return page, last, nil
}
