package testenv

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is a TCP fault proxy (Shopify's toxiproxy, run in the test
// process) between Planwerk and one of its dependencies. Faults are real
// network conditions: refused and cut connections, connections that stay
// open but carry no data, and added latency.
type Proxy struct {
	// Addr is the proxy's HOST:PORT; point the service at it instead of
	// the dependency.
	Addr string
	p    *toxiproxy.Proxy
	mu   sync.Mutex
	n    int
}

var (
	toxiOnce   sync.Once
	toxiServer *toxiproxy.ApiServer
)

// NewProxy starts a proxy in front of upstream (HOST:PORT), removed when
// the test ends.
func NewProxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	toxiOnce.Do(func() {
		toxiServer = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	})
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + upstream
	p := toxiproxy.NewProxy(toxiServer, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("start fault proxy to %s: %v", upstream, err)
	}
	t.Cleanup(p.Stop)
	return &Proxy{Addr: p.Listen, p: p}
}

// Down refuses new connections and cuts the open ones, as a stopped or
// restarting server does.
func (p *Proxy) Down() {
	p.p.Stop()
}

// Up accepts connections again (on the same address) and removes every
// toxic.
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	p.Heal(t)
	// The port was just freed by Down; rebinding it may briefly fail while
	// the kernel releases it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := p.p.Start()
		if err == nil || err == toxiproxy.ErrProxyAlreadyStarted {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("restart fault proxy on %s: %v", p.Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Freeze lets connections open but carries no data in either direction,
// as a server stopped with SIGSTOP or a network black hole does. Bytes
// sent meanwhile are lost: connections that were used while frozen are
// unusable afterwards.
func (p *Proxy) Freeze(t testing.TB) {
	t.Helper()
	p.add(t, "timeout", "downstream", map[string]any{"timeout": 0})
	p.add(t, "timeout", "upstream", map[string]any{"timeout": 0})
}

// StallAfter passes the first n bytes each open or new connection carries
// from the dependency from now on, then holds back everything after them
// (and drops it), as a server that hangs midway through a response does.
// It is in place before the bytes flow: adding a toxic to a connection
// whose client has stopped reading would wait for that client.
func (p *Proxy) StallAfter(t testing.TB, n int64) {
	t.Helper()
	p.add(t, "stall_after", "downstream", map[string]any{"bytes": n})
}

// stallAfter is the toxic of StallAfter.
type stallAfter struct {
	Bytes int64 `json:"bytes"`
}

// stallState counts a connection's bytes passed.
type stallState struct{ passed int64 }

func (s *stallAfter) NewState() any { return new(stallState) }

func (s *stallAfter) Pipe(stub *toxics.ToxicStub) {
	state := stub.State.(*stallState)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			switch {
			case c == nil && state.passed < s.Bytes:
				stub.Close()
				return
			case c == nil:
				// A server that hangs does not close the connection
				// either: it stays open until the proxy stops.
				<-stub.Interrupt
				return
			}
			if left := s.Bytes - state.passed; left > 0 {
				if int64(len(c.Data)) > left {
					c = &stream.StreamChunk{Timestamp: c.Timestamp, Data: c.Data[:left]}
				}
				select {
				case stub.Output <- c:
					state.passed += int64(len(c.Data))
				case <-stub.Interrupt:
					return
				}
			}
		}
	}
}

func init() { toxics.Register("stall_after", new(stallAfter)) }

// Slow delays every chunk of data by latency in both directions.
func (p *Proxy) Slow(t testing.TB, latency time.Duration) {
	t.Helper()
	for _, dir := range []string{"downstream", "upstream"} {
		p.add(t, "latency", dir, map[string]any{"latency": latency.Milliseconds()})
	}
}

// Heal removes every toxic; connections opened meanwhile keep working.
func (p *Proxy) Heal(t testing.TB) {
	t.Helper()
	p.p.Toxics.ResetToxics(t.Context())
}

func (p *Proxy) add(t testing.TB, typ, stream string, attrs map[string]any) {
	t.Helper()
	p.mu.Lock()
	p.n++
	name := fmt.Sprintf("%s_%s_%d", typ, stream, p.n)
	p.mu.Unlock()
	body := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "toxicity": 1, "attributes": %s}`,
		name, typ, stream, jsonObject(attrs))
	if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		t.Fatalf("add %s toxic: %v", typ, err)
	}
}

func jsonObject(m map[string]any) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%q: %v", k, v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
