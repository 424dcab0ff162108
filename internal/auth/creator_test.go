package auth_test

// API clients record the admin who created them; when that admin is
// deleted or loses admin, the clients they created end with their tokens.

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// creatorAdmin creates another admin of c's tenant and signs them in.
func creatorAdmin(t *testing.T, c *testenv.Client, email string) *testenv.Client {
	t.Helper()
	const password = "admin-password"
	u := c.Create(t, "users", testenv.M{"email": email, "password": password, "isAdmin": true})
	return &testenv.Client{Srv: c.Srv, Slug: c.Slug, UserID: testenv.ID(t, u), Token: c.Srv.Token(t, c.Slug, email, password)}
}

// creatorClientPath is the path of an API client record.
func creatorClientPath(t *testing.T, client testenv.M) string {
	t.Helper()
	return fmt.Sprintf("/v1/api-clients/%d", testenv.ID(t, client))
}

// entryDays makes each time entry clientWorks writes one of a day of its own.
var entryDays atomic.Int64

// clientWorks checks that a token of an API client reads and writes.
func clientWorks(t *testing.T, what string, c *testenv.Client) {
	t.Helper()
	if status, _, raw := c.Send(t, http.MethodGet, "/v1/users/me", nil); status != http.StatusOK {
		t.Errorf("%s: GET /v1/users/me: %d %s", what, status, raw)
	}
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(entryDays.Add(1)))
	entry := testenv.M{"trackingType": "WORKTIME", "day": day.Format(time.DateOnly),
		"startTime": day.Add(8 * time.Hour).Format("2006-01-02T15:04:05.000Z"),
		"endTime":   day.Add(9 * time.Hour).Format("2006-01-02T15:04:05.000Z")}
	if status, _, raw := c.Send(t, http.MethodPost, "/v1/time-entries", entry); status != http.StatusCreated {
		t.Errorf("%s: POST /v1/time-entries: %d %s", what, status, raw)
	}
}

// clientRevoked checks that an API client is gone: its token gets 401, its
// credentials no token, it is not listed, and none of the tokens it was
// given is left unrevoked.
func clientRevoked(t *testing.T, what string, admin, token *testenv.Client, client testenv.M) {
	t.Helper()
	token.Fail(t, http.MethodGet, "/v1/users/me", nil, http.StatusUnauthorized, "")
	if status, _, body := token.Srv.Grant(t, token.Slug, testenv.ClientForm(client["clientId"].(string), client["clientSecret"].(string))); status != http.StatusUnauthorized || body["error"] != "invalid_client" {
		t.Errorf("%s: grant: %d %v, want 401 invalid_client", what, status, body)
	}
	admin.Fail(t, http.MethodGet, creatorClientPath(t, client), nil, http.StatusNotFound, "not_found")
	for _, c := range admin.List(t, "/v1/api-clients") {
		if c["clientId"] == client["clientId"] {
			t.Errorf("%s: still listed: %v", what, c)
		}
	}
	var live int
	if err := token.Srv.Service.DB.QueryRowContext(t.Context(),
		`SELECT COUNT(*) FROM access_tokens WHERE client = $1 AND revoked = FALSE`, testenv.ID(t, client)).Scan(&live); err != nil || live != 0 {
		t.Errorf("%s: %d tokens of the client are not revoked (%v)", what, live, err)
	}
}

// clientListed checks that an API client is still listed.
func clientListed(t *testing.T, what string, admin *testenv.Client, client testenv.M) {
	t.Helper()
	admin.Object(t, http.MethodGet, creatorClientPath(t, client), nil, http.StatusOK)
	for _, c := range admin.List(t, "/v1/api-clients") {
		if c["clientId"] == client["clientId"] {
			return
		}
	}
	t.Errorf("%s: not listed", what)
}

// TestAPIClientCreatedBy: the create answer, the GET and the list show
// who created a client; clients created before it was recorded show null.
func TestAPIClientCreatedBy(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		owner := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		second := creatorAdmin(t, owner, "second@acme.test")
		member := owner.Member(t, "m@acme.test")

		byOwner := owner.APIClient(t, "by owner", member.UserID, "read")
		bySecond := second.APIClient(t, "by second", member.UserID, "read write")
		for _, c := range []struct {
			client testenv.M
			want   int64
		}{{byOwner, owner.UserID}, {bySecond, second.UserID}} {
			if got, ok := c.client["createdBy"]; !ok || testenv.Num(got) != c.want {
				t.Errorf("create answer: createdBy %v, want %d", got, c.want)
			}
			if got := owner.Object(t, http.MethodGet, creatorClientPath(t, c.client), nil, http.StatusOK); testenv.Num(got["createdBy"]) != c.want {
				t.Errorf("GET: createdBy %v, want %d", got["createdBy"], c.want)
			}
		}
		for _, c := range owner.List(t, "/v1/api-clients") {
			want := map[any]int64{byOwner["clientId"]: owner.UserID, bySecond["clientId"]: second.UserID}[c["clientId"]]
			if testenv.Num(c["createdBy"]) != want {
				t.Errorf("list: %v, want createdBy %d", c, want)
			}
		}

		// A client from before the creator was recorded.
		if _, err := srv.Service.DB.ExecContext(t.Context(), `UPDATE api_clients SET created_by = NULL WHERE client_id = $1`, byOwner["clientId"]); err != nil {
			t.Fatal(err)
		}
		got := owner.Object(t, http.MethodGet, creatorClientPath(t, byOwner), nil, http.StatusOK)
		if v, ok := got["createdBy"]; !ok || v != nil {
			t.Errorf("a client without a recorded creator: %v, want createdBy null", got)
		}
		// Nothing revokes it: it has no creator to lose admin.
		owner.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", second.UserID), testenv.M{"isAdmin": false}, http.StatusOK)
		clientListed(t, "the client without a creator", owner, byOwner)
	})
}

// TestDemotionRevokesCreatedClients: an admin who loses admin (PATCH or
// PUT) loses the clients they created, also those acting as another
// user, with every token they were given; clients of admins who stay
// admins keep working, and so do the first user's, who stays an admin
// whatever isAdmin says.
func TestDemotionRevokesCreatedClients(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		owner := srv.SignIn(t, tn)
		a := creatorAdmin(t, owner, "a@acme.test")
		other := creatorAdmin(t, owner, "other@acme.test")
		member := owner.Member(t, "m@acme.test")

		// A creates a read-write client for the member, and one acting as A.
		forMember := a.APIClient(t, "sync", member.UserID, "read write")
		forSelf := a.APIClient(t, "own", a.UserID, "read")
		memberToken := a.ClientSignIn(t, forMember)
		selfToken := a.ClientSignIn(t, forSelf)
		// The other admin's and the owner's clients for the member.
		kept := other.APIClient(t, "kept", member.UserID, "read write")
		keptToken := other.ClientSignIn(t, kept)
		owners := owner.APIClient(t, "owner's", member.UserID, "read write")
		ownersToken := owner.ClientSignIn(t, owners)
		clientWorks(t, "A's client before", memberToken)

		// Another admin demotes A.
		other.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", a.UserID), testenv.M{"isAdmin": false}, http.StatusOK)
		clientRevoked(t, "A's client for the member", other, memberToken, forMember)
		clientRevoked(t, "A's client acting as A", other, selfToken, forSelf)
		// A is a member now and manages no clients.
		a.Fail(t, http.MethodPost, "/v1/api-clients", testenv.M{"name": "late", "user": member.UserID, "scope": "read"}, http.StatusForbidden, "forbidden")
		// Clients of admins who stay admins are untouched.
		clientWorks(t, "the other admin's client", keptToken)
		clientListed(t, "the other admin's client", owner, kept)
		clientWorks(t, "the owner's client", ownersToken)

		// Made an admin again, A gets no clients back; a new one works.
		other.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", a.UserID), testenv.M{"isAdmin": true}, http.StatusOK)
		a = &testenv.Client{Srv: srv, Slug: tn.Slug, UserID: a.UserID, Token: srv.Token(t, tn.Slug, "a@acme.test", "admin-password")}
		again := a.APIClient(t, "again", member.UserID, "read write")
		againToken := a.ClientSignIn(t, again)
		clientWorks(t, "A's new client", againToken)
		// A PUT demotes as well.
		other.Object(t, http.MethodPut, fmt.Sprintf("/v1/users/%d", a.UserID), testenv.M{"email": "a@acme.test", "isAdmin": false}, http.StatusOK)
		clientRevoked(t, "A's client after a PUT", other, againToken, again)

		// The owner set to isAdmin false stays an admin and keeps theirs.
		other.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", owner.UserID), testenv.M{"isAdmin": false}, http.StatusOK)
		clientWorks(t, "the owner's client after isAdmin false", ownersToken)
		clientListed(t, "the owner's client", other, owners)
		// Demoting the other admin leaves the owner's clients alone too.
		owner.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", other.UserID), testenv.M{"isAdmin": false}, http.StatusOK)
		clientRevoked(t, "the other admin's client", owner, keptToken, kept)
		clientWorks(t, "the owner's client", ownersToken)
	})
}

// TestDeletionRevokesCreatedClients: deleting an admin deletes the
// clients they created, with their tokens; a client acting as a deleted
// user stays listed but gets no token, and its tokens end.
func TestDeletionRevokesCreatedClients(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		owner := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		a := creatorAdmin(t, owner, "a@acme.test")
		other := creatorAdmin(t, owner, "other@acme.test")
		member := owner.Member(t, "m@acme.test")
		leaving := owner.Member(t, "leaving@acme.test")

		forMember := a.APIClient(t, "sync", member.UserID, "read write")
		memberToken := a.ClientSignIn(t, forMember)
		kept := other.APIClient(t, "kept", member.UserID, "read write")
		keptToken := other.ClientSignIn(t, kept)
		actingAsLeaving := other.APIClient(t, "acting as leaving", leaving.UserID, "read write")
		leavingToken := other.ClientSignIn(t, actingAsLeaving)
		clientWorks(t, "A's client before", memberToken)
		clientWorks(t, "the client acting as the leaving member before", leavingToken)

		other.Object(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", a.UserID), nil, http.StatusOK)
		clientRevoked(t, "A's client", other, memberToken, forMember)
		clientWorks(t, "the other admin's client", keptToken)
		clientListed(t, "the other admin's client", owner, kept)

		// The client's user is deleted: the client is listed, useless.
		owner.Object(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", leaving.UserID), nil, http.StatusOK)
		leavingToken.Fail(t, http.MethodGet, "/v1/users/me", nil, http.StatusUnauthorized, "")
		if status, _, body := srv.Grant(t, leaving.Slug, testenv.ClientForm(actingAsLeaving["clientId"].(string), actingAsLeaving["clientSecret"].(string))); status != http.StatusUnauthorized || body["error"] != "invalid_client" {
			t.Errorf("grant of a client whose user is deleted: %d %v", status, body)
		}
		clientListed(t, "the client of the deleted user", owner, actingAsLeaving)
		clientWorks(t, "the other admin's client", keptToken)
	})
}

// TestDemotionRacingCreates: creates of an admin racing with their
// demotion leave no client of theirs behind: each create either comes
// first and is revoked with the demotion, or comes after it and is
// refused, also when the admin's token was checked before the demotion.
func TestDemotionRacingCreates(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		owner := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		a := creatorAdmin(t, owner, "a@acme.test")
		member := owner.Member(t, "m@acme.test")
		reqs := make([]*http.Request, 31)
		for i := range reqs {
			reqs[i] = a.Request(t, http.MethodPost, "/v1/api-clients", testenv.M{"name": fmt.Sprintf("racer %d", i), "user": member.UserID, "scope": "read"})
		}
		// The demotion goes amid the creates.
		reqs[10] = owner.Request(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", a.UserID), testenv.M{"isAdmin": false})
		created, refused := 0, 0
		for i, ans := range raceAll(reqs) {
			switch {
			case ans.err != nil:
				t.Fatalf("request %d: %v", i, ans.err)
			case i == 10:
				if ans.status != http.StatusOK {
					t.Fatalf("demotion: %d %q", ans.status, ans.code)
				}
			case ans.status == http.StatusCreated:
				created++
			case ans.status == http.StatusForbidden && ans.code == "forbidden":
				refused++
			default:
				t.Errorf("create %d: %d %q, want 201 or 403 forbidden", i, ans.status, ans.code)
			}
		}
		for _, c := range owner.List(t, "/v1/api-clients") {
			if testenv.Num(c["createdBy"]) == a.UserID {
				t.Errorf("a client of the demoted admin is left: %v", c)
			}
		}
		t.Logf("%d creates before the demotion (revoked with it), %d refused after it", created, refused)
	})
}

// TestDemotionRacingGrants: tokens granted to a client while its creator
// is demoted are revoked with it: a grant either comes first and its
// token is revoked, or comes after and is refused.
func TestDemotionRacingGrants(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		owner := srv.SignIn(t, tn)
		a := creatorAdmin(t, owner, "a@acme.test")
		member := owner.Member(t, "m@acme.test")
		client := a.APIClient(t, "sync", member.UserID, "read write")
		form := testenv.ClientForm(client["clientId"].(string), client["clientSecret"].(string))
		reqs := make([]*http.Request, 31)
		for i := range reqs {
			reqs[i] = srv.TokenRequest(t, tn.Slug, form)
		}
		reqs[10] = owner.Request(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", a.UserID), testenv.M{"isAdmin": false})
		for i, ans := range raceAll(reqs) {
			switch {
			case ans.err != nil:
				t.Fatalf("request %d: %v", i, ans.err)
			case i == 10:
				if ans.status != http.StatusOK {
					t.Fatalf("demotion: %d %q", ans.status, ans.code)
				}
			case ans.status == http.StatusTooManyRequests:
				// The token endpoint's rate limit: no grant, nothing to revoke.
			case ans.status != http.StatusOK && ans.status != http.StatusUnauthorized:
				t.Errorf("grant %d: %d %q, want 200 or 401", i, ans.status, ans.code)
			}
		}
		var live int
		if err := srv.Service.DB.QueryRowContext(t.Context(),
			`SELECT COUNT(*) FROM access_tokens WHERE client = $1 AND revoked = FALSE`, testenv.ID(t, client)).Scan(&live); err != nil || live != 0 {
			t.Errorf("%d tokens of the revoked client are live (%v)", live, err)
		}
	})
}
