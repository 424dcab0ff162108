package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// heapPeak runs fn and returns by how much the heap grew above what it
// held before, at the most. The garbage collector runs at 10% growth
// meanwhile, so the peak follows what fn keeps alive rather than what it
// has discarded and not yet collected.
func heapPeak(fn func()) uint64 {
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// TestPopulateMemory: expanding references of a long list holds a few
// records at a time, not the list: 60 time entries referring to 6
// projects of 1.5 MiB each (more than the expansion keeps at once) make an
// answer of 90 MB, and the heap grows by far less than 64 MiB while it
// is written, for one request and for three at once.
func TestPopulateMemory(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		acme := srv.CreateTenant(t, "acme")
		db, ctx := srv.Service.DB, context.Background()
		pad := strings.Repeat("m", 3<<19)
		var projects []int64
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := 0; i < 6; i++ {
				id, err := db.NewID(ctx, q, acme.ID)
				if err != nil {
					return err
				}
				if _, err := db.InsertRecord(ctx, q, acme.ID, store.Collection{Table: "records", Resource: "projects"}, id, map[string]any{"name": fmt.Sprint("p", i), "pad": pad}); err != nil {
					return err
				}
				projects = append(projects, id)
			}
			for i := 0; i < 60; i++ {
				id, err := db.NewID(ctx, q, acme.ID)
				if err != nil {
					return err
				}
				doc := map[string]any{"trackingType": "WORK", "project": projects[i%len(projects)], "day": "2026-01-05", "duration": 60, "user": acme.AdminID}
				if _, err := db.InsertRecord(ctx, q, acme.ID, store.Collection{Table: "records", Resource: "time-entries"}, id, doc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		c := srv.SignIn(t, acme)
		// get streams the answer away instead of reading it whole as the
		// client's Send does: a 90 MB answer held in this process would
		// count in the heap the test measures. It runs beside the test,
		// so it reports instead of stopping the test.
		get := func() int64 {
			resp, err := http.DefaultClient.Do(c.Request(t, http.MethodGet, "/v1/time-entries?populate=project&limit=1000", nil))
			if err != nil {
				t.Error(err)
				return 0
			}
			defer resp.Body.Close()
			n, err := io.Copy(io.Discard, resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("populated list: %d after %d bytes: %v", resp.StatusCode, n, err)
			}
			return n
		}
		var size int64
		one := heapPeak(func() { size = get() })
		if size < 90<<20 {
			t.Fatalf("the populated list has %d bytes, want every entry with its 1 MiB project", size)
		}
		three := heapPeak(func() {
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() { defer wg.Done(); get() }()
			}
			wg.Wait()
		})
		t.Logf("heap growth: %d MiB for one populated list of %d MiB, %d MiB for three at once", one>>20, size>>20, three>>20)
		if one > 64<<20 || three > 3*64<<20 {
			t.Errorf("heap grew by %d MiB for one request, %d MiB for three; at most 64 MiB per request", one>>20, three>>20)
		}
	})
}
