package httpapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestFirstUserStaysAdmin: the tenant's first user cannot be deleted, and
// deleting users never makes someone else an admin.
func TestFirstUserStaysAdmin(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		owner := login(t, srv, tn)
		auth := func(token string) map[string]string {
			return map[string]string{"companyurl": tn.Slug, "Authorization": "Bearer " + token}
		}
		_, _, plain := call(t, http.MethodPost, srv.URL+"/v1/users", auth(owner.AccessToken), strings.NewReader(`{"email":"plain@acme.test","password":"plain-password"}`))
		_, _, second := call(t, http.MethodPost, srv.URL+"/v1/users", auth(owner.AccessToken), strings.NewReader(`{"email":"second@acme.test","password":"second-password","isAdmin":true}`))
		if plain["id"] == nil || second["id"] == nil {
			t.Fatalf("users: %v %v", plain, second)
		}
		status, _, tok := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, url.Values{"grant_type": {"password"},
			"username": {"second@acme.test"}, "password": {"second-password"}, "client_id": {"a"}, "client_secret": {"b"}})
		if status != 200 {
			t.Fatalf("second admin login: %d", status)
		}
		status, _, body := call(t, http.MethodDelete, srv.URL+"/v1/users/"+strconv.Itoa(int(tn.AdminID)), auth(tok["access_token"].(string)), nil)
		if status != 409 {
			t.Fatalf("deleting the first user: %d %v, want 409", status, body)
		}
		// The plain user is still no admin.
		status, _, ptok := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, url.Values{"grant_type": {"password"},
			"username": {"plain@acme.test"}, "password": {"plain-password"}, "client_id": {"a"}, "client_secret": {"b"}})
		if status != 200 {
			t.Fatal(status)
		}
		if status, _, _ := call(t, http.MethodPost, srv.URL+"/v1/projects", auth(ptok["access_token"].(string)), strings.NewReader(`{}`)); status != 403 {
			t.Errorf("plain user wrote a project: %d", status)
		}
		// The first user stays an admin even with isAdmin false.
		call(t, http.MethodPatch, srv.URL+"/v1/users/"+strconv.Itoa(int(tn.AdminID)), auth(owner.AccessToken), strings.NewReader(`{"isAdmin":false}`))
		again := login(t, srv, tn)
		if status, _, _ := call(t, http.MethodPost, srv.URL+"/v1/projects", auth(again.AccessToken), strings.NewReader(`{}`)); status != 201 {
			t.Errorf("first user after isAdmin false: %d, want 201", status)
		}
	})
}

// TestLoginWithoutPassword: a user created without a password cannot sign
// in, and the answer is the same as for a wrong password.
func TestLoginWithoutPassword(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) { loginWithoutPassword(t, b) })
}

func loginWithoutPassword(t *testing.T, b testenv.Backend) {
	srv := testenv.Start(t, b)
	tn := srv.CreateTenant(t, "acme")
	owner := login(t, srv, tn)
	call(t, http.MethodPost, srv.URL+"/v1/users", map[string]string{"companyurl": tn.Slug, "Authorization": "Bearer " + owner.AccessToken},
		strings.NewReader(`{"email":"nopw@acme.test"}`))
	status, _, body := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, url.Values{"grant_type": {"password"},
		"username": {"nopw@acme.test"}, "password": {"anything-at-all"}, "client_id": {"a"}, "client_secret": {"b"}})
	if status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("login of a user without password: %d %v", status, body)
	}
}

// TestLoginBrakeParallel: guesses sent at once are counted before the
// slow password check, so the brake holds.
func TestLoginBrakeParallel(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) { loginBrakeParallel(t, b) })
}

func loginBrakeParallel(t *testing.T, b testenv.Backend) {
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
			form := passwordForm(tn)
			form.Set("password", "guess-"+strconv.Itoa(i))
			status, _, _ := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, form)
			mu.Lock()
			counts[status]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if counts[400] > 3 || counts[429] < 9 {
		t.Errorf("12 parallel guesses with a brake of 3: %v", counts)
	}
}
