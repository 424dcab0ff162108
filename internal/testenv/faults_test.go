//go:build system

package testenv_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// redisAddr is the Redis that the fault proxy test talks through; any TCP
// server that answers a line would do.
const redisAddr = "127.0.0.1:6379"

func ping(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

// TestProxy checks each fault of the proxy against a real server.
func TestProxy(t *testing.T) {
	if _, err := ping(redisAddr); err != nil {
		testenv.SkipOrFail(t, "redis at "+redisAddr+" does not answer: "+err.Error())
	}
	p := testenv.NewProxy(t, redisAddr)
	if got, err := ping(p.Addr); err != nil || !strings.HasPrefix(got, "+PONG") {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}
	p.Freeze(t)
	if got, err := ping(p.Addr); err == nil {
		t.Fatalf("frozen proxy answered %q", got)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("frozen proxy: %v, want a timeout", err)
	}
	p.Heal(t)
	if got, err := ping(p.Addr); err != nil || !strings.HasPrefix(got, "+PONG") {
		t.Fatalf("healed: %q, %v", got, err)
	}
	p.Down()
	if _, err := ping(p.Addr); err == nil {
		t.Fatal("a proxy that is down accepted a connection")
	}
	p.Up(t)
	if got, err := ping(p.Addr); err != nil || !strings.HasPrefix(got, "+PONG") {
		t.Fatalf("up again: %q, %v", got, err)
	}
	p.Slow(t, 300*time.Millisecond)
	start := time.Now()
	_, err := ping(p.Addr)
	// The 500 ms deadline of ping passes before a 2 × 300 ms round trip.
	if err == nil {
		t.Fatalf("a round trip through 300 ms of latency each way took only %s", time.Since(start))
	}
}
