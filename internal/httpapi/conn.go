package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

// HTTPServer returns the net/http server for s: header and keep-alive
// timeouts; the write and body timeouts are per request and per
// connection (see Listener and observe), because a long answer may take
// as long as the client keeps reading. base is the context of every
// request; cancelling it ends all requests in flight.
func (s *Server) HTTPServer(base context.Context) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// Listener wraps ln so that a connection whose peer takes no data for
// the write-idle timeout is cut: every write must make progress within it.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return idleListener{Listener: ln, idle: s.cfg.WriteIdleTimeout}
}

type idleListener struct {
	net.Listener
	idle time.Duration
}

func (l idleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &idleConn{Conn: c, idle: l.idle}, nil
}

// idleConn gives every write its own deadline.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// ReadFrom keeps sendfile for downloads, a bounded chunk per deadline.
func (c *idleConn) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	const chunk = 1 << 20
	var total int64
	for {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.idle)); err != nil {
			return total, err
		}
		n, err := rf.ReadFrom(io.LimitReader(r, chunk))
		total += n
		if err != nil || n < chunk {
			return total, err
		}
	}
}

// CloseWrite lets the server half-close after an error answer, as it
// does on a plain TCP connection.
func (c *idleConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// bodyError is a failure to read the request body: the client's, never
// a dependency's.
type bodyError struct {
	err     error
	timeout bool
}

func (e *bodyError) Error() string {
	if e.timeout {
		return "the request body stalled"
	}
	return "the request body cannot be read: " + e.err.Error()
}

func (e *bodyError) Unwrap() error { return e.err }

// idleBody gives every read of a request body a deadline of its own: a
// client that sends nothing for the idle timeout is cut off, one that
// keeps sending may take as long as it needs. The deadline is lifted at
// the end of the body, when the server starts watching the connection
// for the client going away.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
	done bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if !b.done {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.idle))
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.lift()
	case err != nil:
		// The deadline stays: the server reads on to discard the rest of a
		// body the handler gave up on, and must not wait for it for ever.
		b.done = true
		err = &bodyError{err: err, timeout: errors.Is(err, os.ErrDeadlineExceeded)}
	}
	return n, err
}

func (b *idleBody) lift() {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

func (b *idleBody) Close() error {
	b.lift()
	return b.ReadCloser.Close()
}
