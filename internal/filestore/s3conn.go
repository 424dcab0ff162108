package filestore

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
)

// s3Limits bound how long an S3 call may wait on the store, whatever its
// context allows: a store that is down, frozen or too slow fails the call
// instead of holding the request (and its goroutine and buffers) open.
type s3Limits struct {
	dial           time.Duration // to open a TCP connection
	tlsHandshake   time.Duration
	responseHeader time.Duration // from a request sent to its answer's headers
	// idle is the longest a transfer may pause: a read or write that moves
	// no byte for this long fails, in the middle of a body as well.
	idle time.Duration
	// pooled is how long an unused connection is kept; below idle, so
	// that the pool closes it before its idle limit does.
	pooled    time.Duration
	keepAlive net.KeepAliveConfig // TCP probes that find a peer gone away
	// attempts is how often minio-go tries a request that failed in a way
	// worth retrying (a refused connection, a 503); it waits between
	// tries, at most a second each.
	attempts int
	// cleanup bounds the abort of a failed multipart upload, and
	// cleanupWait how long the failed call waits for it.
	cleanup, cleanupWait time.Duration
}

// defaultS3Limits are generous for a store that works, which answers in
// milliseconds, and end the calls to a broken one: a call with no
// deadline of its own waits on a frozen store at most attempts ×
// responseHeader (30 s, a request's own deadline); requests, with their
// deadlines, usually end sooner.
func defaultS3Limits() s3Limits {
	return s3Limits{
		dial:           5 * time.Second,
		tlsHandshake:   5 * time.Second,
		responseHeader: 10 * time.Second,
		idle:           30 * time.Second,
		pooled:         20 * time.Second,
		keepAlive:      net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3},
		attempts:       3,
		cleanup:        10 * time.Second,
		cleanupWait:    2 * time.Second,
	}
}

// s3Transport is minio-go's transport (TLS settings, proxy from the
// environment, no transparent decompression) with the limits applied.
// It speaks HTTP/1.1 only, one request per connection at a time, which
// the per-connection idle limit relies on.
func s3Transport(secure bool, l s3Limits) (*http.Transport, error) {
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: l.dial, KeepAliveConfig: l.keepAlive}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &idleConn{Conn: c, idle: l.idle}, nil
	}
	tr.TLSHandshakeTimeout = l.tlsHandshake
	tr.ResponseHeaderTimeout = l.responseHeader
	tr.IdleConnTimeout = l.pooled
	tr.ForceAttemptHTTP2 = false
	return tr, nil
}

// idleConn fails a read or write that moves no byte for idle: a store
// that stops answering in the middle of a body (where no transport
// timeout applies) fails the call. A write extends a pending read as
// well, since a request sent waits for its answer.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
