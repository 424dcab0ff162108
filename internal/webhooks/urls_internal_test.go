package webhooks

import (
	"net/netip"
	"testing"
	"time"
)

func TestBlocked(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.255.0.9": true, "::1": true, "10.0.0.1": true, "172.31.255.255": true,
		"192.168.0.1": true, "169.254.169.254": true, "fe80::1": true, "fc00::1": true, "fd12:3456::1": true,
		"0.0.0.0": true, "0.1.2.3": true, "::": true, "224.0.0.251": true, "ff02::1": true, "100.64.0.1": true,
		"100.127.255.254": true, "255.255.255.255": true, "::ffff:10.0.0.1": true, "::ffff:127.0.0.1": true,
		"93.184.216.34": false, "8.8.8.8": false, "172.32.0.1": false, "100.128.0.1": false,
		"2606:4700::1111": false, "::ffff:8.8.8.8": false, "192.169.0.1": false,
	} {
		if got := blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("blocked(%s) = %v, want %v", addr, got, want)
		}
	}
	if err := dialControl("tcp", "127.0.0.1:80", nil); err == nil {
		t.Error("dialControl let 127.0.0.1 through")
	}
	if err := dialControl("tcp", "[2606:4700::1111]:443", nil); err != nil {
		t.Errorf("dialControl refused a public address: %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://example.com/hook": true, "http://example.com:8080/a?b=c": true,
		"": false, "ftp://example.com/": false, "https://": false, "example.com/x": false,
		"https://u:p@example.com/": false, "https://example.com/#x": false, "javascript:alert(1)": false,
	} {
		if got := checkURL(raw) == ""; got != ok {
			t.Errorf("checkURL(%q) accepted = %v, want %v", raw, got, ok)
		}
	}
}

// TestBackoff: the first retry comes within 10 s, each next one later,
// none after more than RetryMax, jitter never more than a fifth.
func TestBackoff(t *testing.T) {
	s := &Service{cfg: Config{}}
	s.cfg.defaults()
	prevMax := time.Duration(0)
	for n := 1; n <= 40; n++ {
		for range 50 {
			d := s.backoff(n)
			full := min(s.cfg.RetryBase<<min(n-1, 20), s.cfg.RetryMax)
			if d > full || d < full-full/5 {
				t.Fatalf("backoff(%d) = %v, want within a fifth below %v", n, d, full)
			}
			if n == 1 && d > 10*time.Second {
				t.Fatalf("first retry after %v", d)
			}
		}
		full := min(s.cfg.RetryBase<<min(n-1, 20), s.cfg.RetryMax)
		if full < prevMax {
			t.Fatalf("backoff shrinks at attempt %d", n)
		}
		prevMax = full
	}
	// 24 hours of retries take some 30 attempts, not thousands.
	var total time.Duration
	n := 0
	for total < s.cfg.RetryFor {
		n++
		total += min(s.cfg.RetryBase<<min(n-1, 20), s.cfg.RetryMax)
	}
	if n < 20 || n > 40 {
		t.Errorf("%d attempts in %v", n, s.cfg.RetryFor)
	}
}
