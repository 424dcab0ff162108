package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"planwerk/internal/etag"
	"planwerk/internal/query"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestRecordsSameID: where two tenants hold records of the same id (SQLite
// numbers each tenant's records apart), each tenant's handle reaches its
// own record only.
func TestRecordsSameID(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db, alpha, beta := twoTenants(t, b)
		a, z := on(db, alpha, notes), on(db, beta, notes)
		recA := insertVia(t, db, a, map[string]any{"title": "same", "in": "alpha"})
		recZ := insertVia(t, db, z, map[string]any{"title": "same", "in": "beta"})
		if _, perTenant := db.LocalFile(); perTenant && recA.ID != recZ.ID {
			t.Fatalf("SQLite ids %d and %d: want the first record of each tenant to have the same id", recA.ID, recZ.ID)
		}
		wantDoc(t, a, recA, "alpha's record")
		wantDoc(t, z, recZ, "beta's record")
		if got := find(t, z, titled(recA), 10); !reflect.DeepEqual(got, []int64{recZ.ID}) {
			t.Errorf("Find through beta's handle = %v, want only beta's %d", got, recZ.ID)
		}
		inTx(t, db, func(q store.Querier) error {
			_, err := z(q).Update(ctx, recZ.ID, created(t, recZ), map[string]any{"title": "changed", "in": "beta"})
			return err
		})
		if n := set(t, db, z, titled(recA), "status", "done"); n != 0 {
			t.Errorf("Set through beta's handle on alpha's title changed %d records, want 0", n)
		}
		wantDoc(t, a, recA, "alpha's record after beta's changed its own")
		inTx(t, db, func(q store.Querier) error { return z(q).Delete(ctx, recZ.ID) })
		wantDoc(t, a, recA, "alpha's record after beta's deleted its own")
		if ok, err := z(nil).Exists(ctx, recA.ID); ok || err != nil {
			t.Errorf("Exists through beta's handle after beta's record is gone = %v, %v; want false", ok, err)
		}
	})
}

// notes is the collection the tests of the Records handle use.
var notes = store.Collection{Table: "records", Resource: "notes"}

// twoTenants opens a fresh database of b with the tenants alpha and beta.
func twoTenants(t *testing.T, b testenv.Backend) (db *store.DB, alpha, beta store.Tenant) {
	t.Helper()
	db = testenv.OpenDB(t, b)
	alpha, _ = testenv.TenantIn(t, db, "alpha", "admin@alpha.test")
	beta, _ = testenv.TenantIn(t, db, "beta", "admin@beta.test")
	return db, alpha, beta
}

// handle is a Records handle taken in q (nil: outside a transaction).
type handle func(q store.Querier) store.Records

// on is the handle on tenant tn's collection c.
func on(db *store.DB, tn store.Tenant, c store.Collection) handle {
	return func(q store.Querier) store.Records { return db.Records(q, tn.ID, c) }
}

// recordsCase is one method of the Records handle. The record rec lives in
// tenant alpha's notes; each outsider handle (tenant beta's notes, tenant
// alpha's memos) holds a twin of it, a record with the same attributes
// under an id of its own.
type recordsCase struct {
	name string
	// outsider calls the method on rec, or on criteria rec matches,
	// through a handle that must not reach rec, and checks the answer.
	outsider func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record)
	// owner calls the method through rec's own handle and checks what it
	// did.
	owner func(t *testing.T, db *store.DB, h handle, rec store.Record)
}

// TestRecords: each method of the handle on a tenant's collection does
// what its comment says, and a record of one tenant's collection is never
// read, found, changed or deleted through the handle on another tenant's
// collection or on another collection of the same tenant, nor does a
// change through its own handle reach the records of those.
func TestRecords(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db, alpha, beta := twoTenants(t, b)
		// alpha's ids run ahead of beta's: on SQLite, which numbers each
		// tenant's records apart, no id of a record of alpha's then names
		// one of beta's, and a handle that reached across tenants would
		// find alpha's record itself. TestRecordsSameID covers ids that
		// coincide.
		inTx(t, db, func(q store.Querier) error {
			for range 100 {
				if _, err := db.NewID(ctx, q, alpha.ID); err != nil {
					return err
				}
			}
			return nil
		})
		own := on(db, alpha, notes)
		outsiders := []struct {
			name string
			h    handle
		}{
			{"another tenant", on(db, beta, notes)},
			{"another collection", on(db, alpha, store.Collection{Table: "records", Resource: "memos"})},
		}
		for _, tc := range recordsCases() {
			t.Run(tc.name, func(t *testing.T) {
				// The title is the case's own, so criteria on it match only
				// the records of this case.
				doc := func(in string) map[string]any { return map[string]any{"title": tc.name, "status": "open", "in": in} }
				rec := insertVia(t, db, own, doc("alpha's notes"))
				twins := make([]store.Record, len(outsiders))
				for i, o := range outsiders {
					twins[i] = insertVia(t, db, o.h, doc(o.name))
				}
				for i, o := range outsiders {
					t.Run("through "+o.name, func(t *testing.T) {
						tc.outsider(t, db, own, o.h, rec, twins[i])
						wantDoc(t, own, rec, "after a call through "+o.name)
						// What the outsider did to its twin is the state the
						// owner's call must leave alone.
						twins[i] = get(t, o.h, twins[i].ID)
					})
				}
				t.Run("through its own", func(t *testing.T) {
					tc.owner(t, db, own, rec)
					for i, o := range outsiders {
						wantDoc(t, o.h, twins[i], "the twin in "+o.name+" after a call through the record's own handle")
					}
				})
			})
		}
		// Every read above ran outside a transaction, on the read pool, or
		// inside one; the handles never left a transaction open.
		if err := db.Tx(ctx, func(store.Querier) error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
}

func recordsCases() []recordsCase {
	ctx := context.Background()
	return []recordsCase{{
		name: "Get",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			if _, err := h(nil).Get(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get = %v, want ErrNotFound", err)
			}
			inTx(t, db, func(q store.Querier) error {
				if _, err := h(q).Get(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Get in a transaction = %v, want ErrNotFound", err)
				}
				return nil
			})
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			wantDoc(t, h, rec, "Get")
			inTx(t, db, func(q store.Querier) error {
				got, err := h(q).Get(ctx, rec.ID)
				if err != nil || got.ID != rec.ID || !sameDoc(t, got.Doc, rec.Doc) {
					t.Errorf("Get in a transaction = %d %s, %v; want %d %s", got.ID, got.Doc, err, rec.ID, rec.Doc)
				}
				return nil
			})
		},
	}, {
		name: "Lock",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			inTx(t, db, func(q store.Querier) error {
				if _, err := h(q).Lock(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Lock = %v, want ErrNotFound", err)
				}
				return nil
			})
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			inTx(t, db, func(q store.Querier) error {
				got, err := h(q).Lock(ctx, rec.ID)
				if err != nil || got.ID != rec.ID || !sameDoc(t, got.Doc, rec.Doc) {
					t.Errorf("Lock = %d %s, %v; want %d %s", got.ID, got.Doc, err, rec.ID, rec.Doc)
				}
				if !lockedElsewhere(t, db, rec) {
					t.Error("after Lock, another connection may change the record")
				}
				return nil
			})
			if lockedElsewhere(t, db, rec) {
				t.Error("the record stays locked after the transaction ended")
			}
		},
	}, {
		name: "Share",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			inTx(t, db, func(q store.Querier) error {
				if _, err := h(q).Share(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Share = %v, want ErrNotFound", err)
				}
				return nil
			})
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			inTx(t, db, func(q store.Querier) error {
				got, err := h(q).Share(ctx, rec.ID)
				if err != nil || got.ID != rec.ID || !sameDoc(t, got.Doc, rec.Doc) {
					t.Errorf("Share = %d %s, %v; want %d %s", got.ID, got.Doc, err, rec.ID, rec.Doc)
				}
				if !lockedElsewhere(t, db, rec) {
					t.Error("after Share, another connection may change the record")
				}
				if _, local := db.LocalFile(); !local && !sharedElsewhere(t, db, rec) {
					t.Error("after Share, another connection may not share the record")
				}
				return nil
			})
			if lockedElsewhere(t, db, rec) {
				t.Error("the record stays locked after the transaction ended")
			}
		},
	}, {
		name: "Exists",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			if ok, err := h(nil).Exists(ctx, rec.ID); ok || err != nil {
				t.Errorf("Exists = %v, %v; want false", ok, err)
			}
			if ok, err := h(nil).Exists(ctx, twin.ID); !ok || err != nil {
				t.Errorf("Exists of the handle's own twin = %v, %v; want true", ok, err)
			}
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			if ok, err := h(nil).Exists(ctx, rec.ID); !ok || err != nil {
				t.Errorf("Exists = %v, %v; want true", ok, err)
			}
			inTx(t, db, func(q store.Querier) error {
				if ok, err := h(q).Exists(ctx, rec.ID); !ok || err != nil {
					t.Errorf("Exists in a transaction = %v, %v; want true", ok, err)
				}
				return nil
			})
		},
	}, {
		name: "Find",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			// The criteria match rec and the twin: only the twin is found.
			if got := find(t, h, titled(rec), 10); !reflect.DeepEqual(got, []int64{twin.ID}) {
				t.Errorf("Find = %v, want only the handle's own twin %d (not %d)", got, twin.ID, rec.ID)
			}
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			second := insertVia(t, db, h, map[string]any{"title": title(t, rec)})
			third := insertVia(t, db, h, map[string]any{"title": title(t, rec)})
			insertVia(t, db, h, map[string]any{"title": "other"})
			if got, want := find(t, h, titled(rec), 10), []int64{rec.ID, second.ID, third.ID}; !reflect.DeepEqual(got, want) {
				t.Errorf("Find = %v, want %v: the matches in id order", got, want)
			}
			if got, want := find(t, h, titled(rec), 2), []int64{rec.ID, second.ID}; !reflect.DeepEqual(got, want) {
				t.Errorf("Find with limit 2 = %v, want %v", got, want)
			}
			found, err := h(nil).Find(ctx, titled(rec), 1)
			if err != nil || len(found) != 1 || found[0].ID != rec.ID || !sameDoc(t, found[0].Doc, rec.Doc) {
				t.Errorf("Find = %v, %v; want the record's document %s", found, err, rec.Doc)
			}
		},
	}, {
		name: "Insert",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			// A record inserted elsewhere with the same attributes stays
			// out of the record's collection.
			other := insertVia(t, db, h, map[string]any{"title": title(t, rec)})
			if other.ID == rec.ID || other.ID == twin.ID {
				t.Errorf("Insert reused id %d", other.ID)
			}
			wantDoc(t, h, other, "the inserted record")
			if _, err := own(nil).Get(ctx, other.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get of the inserted record through the record's own handle = %v, want ErrNotFound", err)
			}
			if got := find(t, own, titled(rec), 10); !reflect.DeepEqual(got, []int64{rec.ID}) {
				t.Errorf("Find through the record's own handle = %v, want only %d", got, rec.ID)
			}
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			var ins store.Record
			inTx(t, db, func(q store.Querier) error {
				var err error
				ins, err = h(q).Insert(ctx, map[string]any{"title": "inserted", "n": 3})
				return err
			})
			got := ins.Doc
			d := decode(t, got)
			id := testenv.ID(t, d)
			if id == 0 || id == rec.ID || d["title"] != "inserted" || d["n"] != 3.0 {
				t.Errorf("Insert = %s, want a new id and the attributes given", got)
			}
			if d["createdAt"] == nil || d["createdAt"] != d["updatedAt"] {
				t.Errorf("Insert = %s, want createdAt and updatedAt, the same", got)
			}
			if ins.ID != id || ins.ETag == "" {
				t.Errorf("Insert returned the id %d (its document's: %d) and the tag %q, want a tag", ins.ID, id, ins.ETag)
			}
			wantDoc(t, h, ins, "the inserted record")
		},
	}, {
		name: "Update",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			inTx(t, db, func(q store.Querier) error {
				_, err := h(q).Update(ctx, rec.ID, created(t, rec), map[string]any{"title": "taken over"})
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Update = %v, want ErrNotFound", err)
				}
				return nil
			})
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			var upd store.Record
			inTx(t, db, func(q store.Querier) error {
				var err error
				upd, err = h(q).Update(ctx, rec.ID, created(t, rec), map[string]any{"title": "changed"})
				return err
			})
			got := upd.Doc
			d := decode(t, got)
			if testenv.ID(t, d) != rec.ID || d["title"] != "changed" || d["createdAt"] != created(t, rec) {
				t.Errorf("Update = %s, want the record's id and creation time with the new title", got)
			}
			if _, ok := d["status"]; ok {
				t.Errorf("Update = %s: the document is replaced, status must be gone", got)
			}
			if u, _ := d["updatedAt"].(string); u < created(t, rec) {
				t.Errorf("Update = %s, want updatedAt stamped no earlier than createdAt", got)
			}
			if upd.ETag == "" || upd.ETag == rec.Tag() {
				t.Errorf("Update returned the tag %q, want a new one (before: %q)", upd.ETag, rec.Tag())
			}
			wantDoc(t, h, upd, "the updated record")
		},
	}, {
		name: "Delete",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			inTx(t, db, func(q store.Querier) error {
				if err := h(q).Delete(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Delete = %v, want ErrNotFound", err)
				}
				return nil
			})
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			inTx(t, db, func(q store.Querier) error { return h(q).Delete(ctx, rec.ID) })
			if _, err := h(nil).Get(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get after Delete = %v, want ErrNotFound", err)
			}
			if ok, err := h(nil).Exists(ctx, rec.ID); ok || err != nil {
				t.Errorf("Exists after Delete = %v, %v; want false", ok, err)
			}
			inTx(t, db, func(q store.Querier) error {
				if err := h(q).Delete(ctx, rec.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("a second Delete = %v, want ErrNotFound", err)
				}
				return nil
			})
		},
	}, {
		name: "Set",
		outsider: func(t *testing.T, db *store.DB, own, h handle, rec, twin store.Record) {
			// The criteria match rec and the twin: only the twin changes.
			if n := set(t, db, h, titled(rec), "status", "done"); n != 1 {
				t.Errorf("Set changed %d records, want 1: the handle's own twin", n)
			}
			if d := decode(t, get(t, h, twin.ID).Doc); d["status"] != "done" {
				t.Errorf("the twin after Set = %v, want status done", d)
			}
		},
		owner: func(t *testing.T, db *store.DB, h handle, rec store.Record) {
			if n := set(t, db, h, titled(rec), "status", "done"); n != 1 {
				t.Errorf("Set changed %d records, want 1", n)
			}
			before, after := decode(t, rec.Doc), decode(t, get(t, h, rec.ID).Doc)
			if after["status"] != "done" || after["title"] != before["title"] || after["createdAt"] != before["createdAt"] {
				t.Errorf("after Set = %v, want status done and the rest kept from %v", after, before)
			}
			if u, _ := after["updatedAt"].(string); u < before["updatedAt"].(string) {
				t.Errorf("after Set, updatedAt = %v, want no earlier than %v", after["updatedAt"], before["updatedAt"])
			}
			if n := set(t, db, h, titled(rec), "status", "done"); n != 0 {
				t.Errorf("Set of the value the record holds changed %d records, want 0", n)
			}
		},
	}}
}

// inTx runs fn in a transaction. fn reports with t.Error, never t.Fatal,
// so that the transaction ends.
func inTx(t *testing.T, db *store.DB, fn func(q store.Querier) error) {
	t.Helper()
	if err := db.Tx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// insertVia stores doc through h in a transaction of its own.
func insertVia(t *testing.T, db *store.DB, h handle, doc map[string]any) store.Record {
	t.Helper()
	var rec store.Record
	inTx(t, db, func(q store.Querier) error {
		var err error
		rec, err = h(q).Insert(context.Background(), doc)
		return err
	})
	return rec
}

func get(t *testing.T, h handle, id int64) store.Record {
	t.Helper()
	rec, err := h(nil).Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %d: %v", id, err)
	}
	return rec
}

// wantDoc checks that h reads rec as it is.
func wantDoc(t *testing.T, h handle, rec store.Record, what string) {
	t.Helper()
	got, err := h(nil).Get(context.Background(), rec.ID)
	if err != nil || got.ID != rec.ID || !sameDoc(t, got.Doc, rec.Doc) {
		t.Errorf("%s: Get = %d %s, %v; want %d %s", what, got.ID, got.Doc, err, rec.ID, rec.Doc)
	}
	// A stored tag is the content's (a change made inside the database
	// leaves none): a read answers with it, and an engine, an import or a
	// row without one comes to the same.
	if got.ETag != rec.ETag || (got.ETag != "" && got.ETag != etag.Of(got.Doc)) {
		t.Errorf("%s: Get's stored tag %q, expected %q, the content's is %q", what, got.ETag, rec.ETag, etag.Of(got.Doc))
	}
}

func find(t *testing.T, h handle, where query.Node, limit int) []int64 {
	t.Helper()
	recs, err := h(nil).Find(context.Background(), where, limit)
	if err != nil {
		t.Fatalf("find: %v", err)
	}
	ids := []int64{}
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	return ids
}

func set(t *testing.T, db *store.DB, h handle, where query.Node, name, value string) int64 {
	t.Helper()
	var n int64
	inTx(t, db, func(q store.Querier) error {
		var err error
		n, err = h(q).Set(context.Background(), where, name, value)
		return err
	})
	return n
}

// titled matches the records with rec's title.
func titled(rec store.Record) query.Node {
	var d struct{ Title string }
	_ = json.Unmarshal(rec.Doc, &d)
	return &query.Cond{Field: query.Field{Name: "title"}, Op: query.Eq,
		Values: []query.Value{{Kind: query.KindString, Str: d.Title}}}
}

func title(t *testing.T, rec store.Record) string {
	t.Helper()
	s, _ := decode(t, rec.Doc)["title"].(string)
	return s
}

func created(t *testing.T, rec store.Record) string {
	t.Helper()
	s, _ := decode(t, rec.Doc)["createdAt"].(string)
	return s
}

func decode(t *testing.T, doc []byte) testenv.M {
	t.Helper()
	var m testenv.M
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	return m
}

// sameDoc compares documents as JSON values: PostgreSQL renders them
// with keys and spaces of its own.
func sameDoc(t *testing.T, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decode(t, a), decode(t, b))
}

// sharedElsewhere reports whether another PostgreSQL connection may read
// the record FOR SHARE at once.
func sharedElsewhere(t *testing.T, db *store.DB, rec store.Record) bool {
	t.Helper()
	var tenantID int64
	if err := db.QueryRowContext(context.Background(), `SELECT tenant_id FROM records WHERE id = $1`, rec.ID).Scan(&tenantID); err != nil {
		t.Fatalf("the record's tenant: %v", err)
	}
	_, err := db.ExecContext(context.Background(), `SELECT 1 FROM records WHERE tenant_id = $1 AND id = $2 FOR SHARE NOWAIT`, tenantID, rec.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		return false
	}
	if err != nil {
		t.Fatalf("share on another connection: %v", err)
	}
	return true
}

// lockedElsewhere reports whether another connection would have to wait
// to change rec: on PostgreSQL for the row's lock; on SQLite, whose writer
// holds the whole database, for the write lock.
func lockedElsewhere(t *testing.T, db *store.DB, rec store.Record) bool {
	t.Helper()
	if path, ok := db.LocalFile(); ok {
		other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		tx, err := other.Begin()
		var sqErr *sqlite.Error
		if errors.As(err, &sqErr) && sqErr.Code()&0xff == sqlite3.SQLITE_BUSY {
			return true
		}
		if err != nil {
			t.Fatalf("begin on another connection: %v", err)
		}
		_ = tx.Rollback()
		return false
	}
	// PostgreSQL's record ids are unique across tenants. The lock names
	// the tenant, as every statement of Planwerk's does: Citus locks rows
	// only through statements that it routes to one tenant's shard.
	var tenantID int64
	if err := db.QueryRowContext(context.Background(), `SELECT tenant_id FROM records WHERE id = $1`, rec.ID).Scan(&tenantID); err != nil {
		t.Fatalf("the record's tenant: %v", err)
	}
	_, err := db.ExecContext(context.Background(), `SELECT 1 FROM records WHERE tenant_id = $1 AND id = $2 FOR UPDATE NOWAIT`, tenantID, rec.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		return true
	}
	if err != nil {
		t.Fatalf("lock on another connection: %v", err)
	}
	return false
}
