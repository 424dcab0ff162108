// Package feed serves the change feed (docs/api.md "Change feed"): every
// change the store's outbox recorded, in commit order,
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
	"sync"
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
	// poll is how often a waiting read looks for changes when commits may
	// not wake it (another instance's, while the database's notifications
	// are not heard); commits that wake it are seen at once, and it looks
	// only every Config.Look then, in case.
	poll = 500 * time.Millisecond
	// scanMax bounds the changes one read looks at, in pages (and in page
	// budgets of bytes).
	scanMax = 4
	// PageBytes is a page's budget: a page ends after the change at which
	// its records add up to this many bytes, and next continues there.
	PageBytes = store.ChangeReadBytes
	// WaitsPerPrincipal is how many waiting reads one user or API client
	// may hold at once; WaitsPerTenant, all of a tenant's principals.
	WaitsPerPrincipal = 8
	WaitsPerTenant    = 32
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
	TenantChangeSignal(tenantID int64) <-chan struct{}
	WakesOnCommit() bool
}

// Visibility says whether the caller may read a record of a resource.
type Visibility func(ctx context.Context, caller auth.Principal, resource string, doc []byte) (bool, error)

// Metrics learns what the feed does: how long after its commit each
// change is handed out, each read of changes, and the waiting reads.
type Metrics interface {
	FeedLag(d time.Duration)
	FeedRead()
	FeedWaiting(delta int)
}

// Config are the feed's settings.
type Config struct {
	// Resources are the names of the feed's resources.
	Resources []string
	Metrics   Metrics
	// Look is how often a waiting read looks for changes itself while
	// commits wake it (5s).
	Look time.Duration
	// Serving, when set, says whether the tenant is still served (nil) or
	// how to refuse it; a waiting read asks it each time it wakes, so that
	// a tenant suspended or deleted meanwhile is told so, not read.
	Serving func(ctx context.Context, tenantID int64) error
}

// Service reads the feed.
type Service struct {
	db      Store
	visible Visibility
	cfg     Config
	waits   waits
}

// New returns a Service.
func New(db Store, visible Visibility, cfg Config) *Service {
	if cfg.Look <= 0 {
		cfg.Look = 5 * time.Second
	}
	return &Service{db: db, visible: visible, cfg: cfg}
}

// Request is a read of the feed as a client asks for it.
type Request struct {
	After     string
	Limit     int
	Resources []string
	Wait      time.Duration
}

// Read returns the changes after the cursor, waiting up to r.Wait for
// the first when there are none. A waiting read holds one of its
// principal's and its tenant's waits (429 when none is free).
func (s *Service) Read(ctx context.Context, caller auth.Principal, r Request) (Page, error) {
	if err := s.check(&r); err != nil {
		return Page{}, err
	}
	after, err := s.start(ctx, caller.TenantID, r.After)
	if err != nil {
		return Page{}, err
	}
	if r.Wait > 0 {
		release, err := s.waits.take(caller)
		if err != nil {
			return Page{}, err
		}
		s.cfg.Metrics.FeedWaiting(1)
		defer s.cfg.Metrics.FeedWaiting(-1)
		defer release()
	}
	deadline := time.Now().Add(r.Wait)
	for {
		// Take the signal before reading: a commit after the read wakes us.
		signal := s.db.TenantChangeSignal(caller.TenantID)
		page, last, err := s.page(ctx, caller, after, r)
		if err != nil {
			return Page{}, err
		}
		if len(page.Changes) > 0 || !time.Now().Before(deadline) {
			return page, nil
		}
		after = last // changes the caller may not see were passed over
		every := poll
		if s.db.WakesOnCommit() {
			every = s.cfg.Look
		}
		timer := time.NewTimer(min(every, time.Until(deadline)))
		select {
		case <-ctx.Done():
			// The request's deadline came first: what was read is the answer.
			timer.Stop()
			return page, nil
		case <-signal:
		case <-timer.C:
		}
		timer.Stop()
		if s.cfg.Serving != nil {
			if err := s.cfg.Serving(ctx, caller.TenantID); err != nil {
				return Page{}, err
			}
		}
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
	// Each name once, before anything else: a name repeated is no
	// second condition, and the read costs what the distinct names do.
	slices.Sort(r.Resources)
	r.Resources = slices.Compact(r.Resources)
	for _, name := range r.Resources {
		if !slices.Contains(s.cfg.Resources, name) {
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

// page reads one page: at most r.Limit changes the caller may see, whose
// records add up to about PageBytes at the most, and the position of the
// last change read (seen or not).
func (s *Service) page(ctx context.Context, caller auth.Principal, after int64, r Request) (Page, int64, error) {
	page := Page{Changes: []Entry{}, Next: Cursor(after)}
	last := after
	var kept, read int64
	// A member's read passes over changes it may not see; scanning stops
	// after a bounded number, and the cursor keeps the progress.
	for scanned := 0; len(page.Changes) < r.Limit && kept < PageBytes && scanned < scanMax*r.Limit && read < scanMax*PageBytes; {
		want := r.Limit - len(page.Changes)
		batch, err := s.db.ChangesAfter(ctx, caller.TenantID, last, r.Resources, want)
		if err != nil {
			return Page{}, 0, err
		}
		s.cfg.Metrics.FeedRead()
		scanned += len(batch)
		var size int64
		for _, c := range batch {
			last, size = c.Seq, size+c.Size
			ok, err := s.visible(ctx, caller, c.Resource, c.Doc)
			if err != nil {
				return Page{}, 0, err
			}
			if !ok {
				continue
			}
			page.Changes = append(page.Changes, EntryOf(c))
			kept += c.Size
			if at, err := time.Parse(store.TimeFormat, c.At); err == nil {
				s.cfg.Metrics.FeedLag(time.Since(at))
			}
		}
		read += size
		page.Next = Cursor(last)
		if len(batch) < want && size < store.ChangeReadBytes {
			break // the end of the feed: the read was not cut short
		}
	}
	return page, last, nil
}

// waits counts the waiting reads of each principal and tenant.
type waits struct {
	mu          sync.Mutex
	byPrincipal map[principalKey]int
	byTenant    map[int64]int
}

// principalKey names a user, or an API client, of a tenant.
type principalKey struct {
	tenant, user, client int64
}

// take holds one wait of the caller's, or refuses with 429 when the
// caller or its tenant holds every one; release gives it back.
func (w *waits) take(caller auth.Principal) (release func(), err error) {
	k := principalKey{caller.TenantID, caller.UserID, caller.ClientID}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byPrincipal == nil {
		w.byPrincipal, w.byTenant = map[principalKey]int{}, map[int64]int{}
	}
	switch {
	case w.byPrincipal[k] >= WaitsPerPrincipal:
		return nil, tooManyWaits(fmt.Sprintf("this user or API client already has %d waiting reads of the feed", WaitsPerPrincipal))
	case w.byTenant[k.tenant] >= WaitsPerTenant:
		return nil, tooManyWaits(fmt.Sprintf("the tenant already has %d waiting reads of the feed", WaitsPerTenant))
	}
	w.byPrincipal[k]++
	w.byTenant[k.tenant]++
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.byPrincipal[k]--; w.byPrincipal[k] == 0 {
			delete(w.byPrincipal, k)
		}
		if w.byTenant[k.tenant]--; w.byTenant[k.tenant] == 0 {
			delete(w.byTenant, k.tenant)
		}
	}, nil
}

func tooManyWaits(why string) error {
	e := errs.New(errs.Throttled, "too_many_requests", why+"; read without wait, or retry when one has ended")
	e.RetryAfter = time.Second
	return e
}
