package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"planwerk/internal/fault"
)

// readyTimeout bounds the readiness checks: a check that cannot tell in
// this time says "not ready" rather than keep the caller waiting. It is
// well below the second within which /readyz answers, so that a load
// balancer probing with a one-second timeout gets the answer, not a
// timeout, when a dependency hangs.
const readyTimeout = 800 * time.Millisecond

// minFree is the free space below which a disk counts as full.
const minFree = 64 << 20

// readiness is the answer of GET /readyz.
type readiness struct {
	Status  string            `json:"status"`
	Code    string            `json:"code,omitempty"`
	Message string            `json:"message,omitempty"`
	Checks  map[string]string `json:"checks"`
}

// readyz checks, at once and each on connections of its own, that the
// database and the file store answer and that their disks have room. It
// answers within readyTimeout whatever they do.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	checks := []struct {
		name string
		part fault.Part
		run  func(context.Context) error
	}{
		{"database", fault.Database, s.databaseReady},
		{"fileStore", fault.FileStore, s.fileStoreReady},
	}
	results := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = within(ctx, c.part, c.run)
		}()
	}
	wg.Wait()
	body := readiness{Status: "ready", Checks: map[string]string{}}
	var problems []string
	for i, c := range checks {
		err := results[i]
		if err == nil {
			body.Checks[c.name] = "ok"
			continue
		}
		e := errorFor(fault.Unavailable(c.part, err))
		s.log.WarnContext(r.Context(), "not ready", "check", c.name, "err", err)
		body.Checks[c.name] = e.Code
		problems = append(problems, e.Message)
		if body.Code == "" {
			body.Code = e.Code
		}
	}
	if len(problems) > 0 {
		body.Status = "unavailable"
		body.Message = strings.Join(problems, "; ")
		w.Header().Set("Retry-After", retryAfterSeconds(dependencyRetry))
		writeJSON(w, http.StatusServiceUnavailable, body)
		return nil
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// within runs check and gives up when ctx ends, even if check does not
// (a frozen dependency may not honour the context).
func within(ctx context.Context, part fault.Part, check func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- check(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fault.Unavailable(part, fmt.Errorf("no answer within %s", readyTimeout))
	}
}

// spaceReporter is a part that can tell the free space of its disk.
type spaceReporter interface {
	FreeBytes() (uint64, error)
}

func (s *Server) databaseReady(ctx context.Context) error {
	if err := s.db.Ready(ctx); err != nil {
		return err
	}
	return roomOn(fault.Database, s.db)
}

func (s *Server) fileStoreReady(ctx context.Context) error {
	if s.fstore == nil {
		return nil
	}
	if err := s.fstore.Ping(ctx); err != nil {
		return fault.Unavailable(fault.FileStore, err)
	}
	if sr, ok := s.fstore.(spaceReporter); ok {
		return roomOn(fault.FileStore, sr)
	}
	return nil
}

// roomOn says whether the disk of part has at least minFree bytes free.
func roomOn(part fault.Part, sr spaceReporter) error {
	free, err := sr.FreeBytes()
	if err != nil {
		return fault.Unavailable(part, err)
	}
	if free < minFree {
		return fault.Full(part, fmt.Errorf("%d MiB free, less than %d MiB", free>>20, minFree>>20))
	}
	return nil
}
