package auth_test

import (
	"strconv"
	"sync"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

func TestLoginBrake(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.LoginFailuresPerAccount = 3
			c.LoginFailuresPerAddress = 6
		})
		tn := srv.CreateTenant(t, "acme")
		bad := testenv.PasswordForm(tn.AdminEmail, "wrong-password")
		for i := 0; i < 3; i++ {
			if status, _, body := srv.Grant(t, tn.Slug, bad); status != 400 {
				t.Fatalf("failure %d: %d %v", i, status, body)
			}
		}
		status, hdr, body := srv.Grant(t, tn.Slug, adminForm(tn))
		if status != 429 || hdr.Get("Retry-After") == "" {
			t.Fatalf("after 3 failures, even the right password: %d %v, Retry-After %q", status, body, hdr.Get("Retry-After"))
		}
		if body["error"] == nil || body["code"] == nil {
			t.Errorf("429 body: %v", body)
		}
		// Other accounts from the same address still get in, until the
		// address's own brake holds.
		for i := 0; i < 3; i++ {
			ghost := "ghost" + string(rune('a'+i)) + "@acme.test"
			if status, _, _ := srv.Grant(t, tn.Slug, testenv.PasswordForm(ghost, tn.Password)); status != 400 {
				t.Fatalf("address failure %d: %d", i, status)
			}
		}
		if status, hdr, _ := srv.Grant(t, tn.Slug, testenv.PasswordForm("someone-else@acme.test", tn.Password)); status != 429 || hdr.Get("Retry-After") == "" {
			t.Errorf("after 6 failures from one address: %d", status)
		}
	})
}

// TestLoginBrakeParallel: guesses sent at once are counted before the
// slow password check, so the brake holds.
func TestLoginBrakeParallel(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.LoginFailuresPerAccount = 3 })
		tn := srv.CreateTenant(t, "acme")
		var (
			mu     sync.Mutex
			counts = map[int]int{}
			wg     sync.WaitGroup
		)
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				status, _, _ := srv.Grant(t, tn.Slug, testenv.PasswordForm(tn.AdminEmail, "guess-"+strconv.Itoa(i)))
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		if counts[400] > 3 || counts[429] < 9 {
			t.Errorf("12 parallel guesses with a brake of 3: %v", counts)
		}
	})
}
