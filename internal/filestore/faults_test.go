//go:build system

package filestore_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"planwerk/internal/filestore"
	"planwerk/internal/testenv"
)

// TestS3Down: with the server unreachable every call fails fast, even
// without a deadline of its own; once it is back the same store works.
func TestS3Down(t *testing.T) {
	t.Parallel()
	fs, p, _ := s3Behind(t)
	put(t, fs, "t1/u1-kept", strings.NewReader("kept"))
	p.Down()
	wantBroken(t, fs, 0)
	p.Up(t)
	wantWorking(t, fs)
}

// TestS3Frozen: a server that takes connections but never answers fails
// each call when its context ends; once it answers again the same store
// works.
func TestS3Frozen(t *testing.T) {
	t.Parallel()
	fs, p, _ := s3Behind(t)
	put(t, fs, "t1/u1-kept", strings.NewReader("kept"))
	p.Freeze(t)
	wantBroken(t, fs, 2*time.Second)
	p.Heal(t)
	wantWorking(t, fs)
}

// TestS3LimitsWithoutDeadline: the connection limits alone end calls on
// a server that stops answering: in the middle of a body, and waiting
// for an answer.
func TestS3LimitsWithoutDeadline(t *testing.T) {
	t.Parallel()
	spec, addr := testenv.S3Endpoint(t)
	shortLimits := func(t *testing.T) (filestore.Store, *testenv.Proxy) {
		p := testenv.NewProxy(t, addr)
		fs, err := filestore.OpenS3ShortLimits(withTimeout(t, 30*time.Second), testenv.S3Via(t, spec, p.Addr))
		if err != nil {
			t.Fatal(err)
		}
		return fs, p
	}
	t.Run("download", func(t *testing.T) {
		fs, p := shortLimits(t)
		// Bigger than what the sockets and the proxy buffer between them.
		put(t, fs, "t1/u1-big", &stream{size: 64 << 20})
		// The download's first MiB arrives, then nothing: the connection
		// stays open and carries no more.
		p.StallAfter(t, 1<<20)
		rc, _, err := fs.Open(context.Background(), "t1/u1-big")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		if _, err := io.ReadFull(rc, make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		timed(t, "reading a download that stalls", patience, func() {
			_, err = io.Copy(io.Discard, rc)
		})
		wantFault(t, "reading a download that stalls", err, false)
		if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("reading a download that stalls: %v, want a timeout", err)
		}
	})
	t.Run("ping", func(t *testing.T) {
		fs, p := shortLimits(t)
		p.Freeze(t)
		var err error
		timed(t, "Ping without deadline on a frozen server", patience, func() { err = fs.Ping(context.Background()) })
		wantFault(t, "Ping without deadline", err, false)
		p.Heal(t)
		if err := fs.Ping(context.Background()); err != nil {
			t.Fatalf("Ping after healing: %v", err)
		}
	})
}

// TestS3PutCutOff: an upload whose server goes away or freezes midway
// fails within its context and a short wait for the abort, which cannot
// reach the server; WalkIncomplete and AbortIncomplete remove the parts
// left once the server is back.
func TestS3PutCutOff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		timeout   time.Duration
		cut, heal func(*testenv.Proxy, testing.TB)
	}{
		{"down", 0, func(p *testenv.Proxy, _ testing.TB) { p.Down() }, (*testenv.Proxy).Up},
		{"frozen", 2 * time.Second, (*testenv.Proxy).Freeze, (*testenv.Proxy).Heal},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, p, spec := s3Behind(t)
			var err error
			timed(t, "Put cut off midway", 2*patience, func() {
				cut := func() { c.cut(p, t) }
				_, err = fs.Put(withTimeout(t, c.timeout), "t1/u1-cut", &stream{size: bigFile, mark: 9 << 20, at: cut})
			})
			wantFault(t, "Put cut off midway", err, false)
			c.heal(p, t)
			ctx := withTimeout(t, 30*time.Second)
			var left []filestore.Incomplete
			if err := fs.WalkIncomplete(ctx, "", func(u filestore.Incomplete) error {
				left = append(left, u)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(left) != 1 || left[0].Key != "t1/u1-cut" || time.Since(left[0].Started) > time.Minute {
				t.Fatalf("unfinished uploads %+v, want the one of t1/u1-cut, started just now", left)
			}
			if err := fs.AbortIncomplete(ctx, left[0]); err != nil {
				t.Fatal(err)
			}
			if err := fs.AbortIncomplete(ctx, left[0]); err != nil {
				t.Errorf("aborting again: %v, want nil", err)
			}
			wantNothingLeft(t, spec, "t1/u1-cut")
		})
	}
}

// patience bounds how long a call to a broken store may take here. It is
// generous, since a loaded machine runs these tests; the store's own
// limits, and the contexts given, are far shorter.
const patience = 5 * time.Second

// wantBroken checks that every call to a store that cannot be reached
// fails within patience as unavailable, given contexts that end after
// timeout (0: never), and that Presign, which needs no network, works.
func wantBroken(t *testing.T, fs filestore.Store, timeout time.Duration) {
	t.Helper()
	var err error
	timed(t, "Put of a small file", patience, func() {
		_, err = fs.Put(withTimeout(t, timeout), "t1/u2-small", strings.NewReader("small"))
	})
	wantFault(t, "Put of a small file", err, false)
	timed(t, "Put of a big file", patience, func() {
		_, err = fs.Put(withTimeout(t, timeout), "t1/u3-big", &stream{size: bigFile})
	})
	wantFault(t, "Put of a big file", err, false)
	timed(t, "Open", patience, func() {
		var rc io.ReadCloser
		if rc, _, err = fs.Open(withTimeout(t, timeout), "t1/u1-kept"); err == nil {
			rc.Close()
		}
	})
	wantFault(t, "Open", err, false)
	timed(t, "Delete", patience, func() { err = fs.Delete(withTimeout(t, timeout), "t1/u1-kept") })
	wantFault(t, "Delete", err, false)
	timed(t, "Ping", patience, func() { err = fs.Ping(withTimeout(t, timeout)) })
	wantFault(t, "Ping", err, false)
	timed(t, "Ping with a 1 s context", patience, func() { err = fs.Ping(withTimeout(t, time.Second)) })
	wantFault(t, "Ping with a 1 s context", err, false)
	timed(t, "Presign", time.Second, func() {
		_, err = fs.Presign(withTimeout(t, timeout), "t1/u1-kept", "kept.txt", "text/plain", time.Minute)
	})
	if err != nil {
		t.Errorf("Presign: %v", err)
	}
}

// wantWorking checks that the store serves again what it held.
func wantWorking(t *testing.T, fs filestore.Store) {
	t.Helper()
	ctx := withTimeout(t, 30*time.Second)
	if err := fs.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if got := read(t, fs, "t1/u1-kept"); got != "kept" {
		t.Errorf("read %q, want %q", got, "kept")
	}
	if _, err := fs.Put(ctx, "t1/u4-new", &stream{size: bigFile}); err != nil {
		t.Errorf("Put: %v", err)
	}
	_, _, err := fs.Open(ctx, "t1/u5-missing")
	if err != filestore.ErrNotFound {
		t.Errorf("Open of a missing file: %v, want ErrNotFound", err)
	}
	if err := fs.Delete(ctx, "t1/u4-new"); err != nil {
		t.Errorf("Delete: %v", err)
	}
}

func read(t *testing.T, fs filestore.Store, key string) string {
	t.Helper()
	rc, _, err := fs.Open(withTimeout(t, 30*time.Second), key)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return string(b)
}
