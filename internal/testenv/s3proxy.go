package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Endpoint is S3 that also returns the HOST:PORT the server listens
// on, so that a test can put a fault proxy in front of it (see S3Via).
func S3Endpoint(t testing.TB) (spec, addr string) {
	t.Helper()
	return S3At(t, t.TempDir())
}

var s3Credentials sync.Once

// S3At is S3Endpoint with the server keeping its objects in the folder
// root, say a small file system that a test fills up.
func S3At(t testing.TB, root string) (spec, addr string) {
	t.Helper()
	bin, err := versitygwPath()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err.Error() + ": S3 run skipped")
	}
	const access, secret = "planwerk-test", "planwerk-test-secret"
	// The port is free when chosen, and may be taken by another test's
	// listener before the server binds it: then the server exits, and
	// what answers on the port is not it. A server that is gone once its
	// port answers is started again on another port.
	for attempt := 1; ; attempt++ {
		addr = FreeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "--access", access, "--secret", secret, "--port", addr, "posix", root)
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("start versitygw: %v", err)
		}
		exited := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			cancel()
			<-exited
		})
		waitListening(t, addr, 15*time.Second)
		select {
		case <-exited:
			if attempt < 3 {
				continue
			}
			t.Fatalf("versitygw on %s exited after its port answered, three times", addr)
		case <-time.After(200 * time.Millisecond):
		}
		break
	}
	s3Credentials.Do(func() {
		// The file store reads its credentials from the environment. Every
		// server of every test has the same ones, so they are set once
		// for the whole test binary (t.Setenv would keep tests from
		// running side by side).
		_ = os.Setenv("AWS_ACCESS_KEY_ID", access)
		_ = os.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	})
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("s3://planwerk-%s?endpoint=%s&region=us-east-1&secure=false", hex.EncodeToString(b), addr), addr
}

func waitListening(t testing.TB, addr string, patience time.Duration) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw does not answer on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// S3Via returns spec with its endpoint replaced by addr, typically a
// Proxy's, keeping bucket and settings.
func S3Via(t testing.TB, spec, addr string) string {
	t.Helper()
	u, err := url.Parse(spec)
	if err != nil {
		t.Fatalf("S3 spec %q: %v", spec, err)
	}
	q := u.Query()
	q.Set("endpoint", addr)
	u.RawQuery = q.Encode()
	return u.String()
}

// S3Client returns a client of the S3 server that spec names and the
// spec's bucket, with the credentials S3 set: for a test to look at the
// bucket behind the store's back.
func S3Client(t testing.TB, spec string) (*minio.Core, string) {
	t.Helper()
	u, err := url.Parse(spec)
	if err != nil {
		t.Fatalf("S3 spec %q: %v", spec, err)
	}
	q := u.Query()
	client, err := minio.New(q.Get("endpoint"), &minio.Options{
		Creds:        credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
		Secure:       q.Get("secure") != "false",
		Region:       q.Get("region"),
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatalf("S3 client: %v", err)
	}
	return &minio.Core{Client: client}, u.Host
}
