package query_test

import (
	"context"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

// benchDocs is 10 MB of records of about 20 KB each: large enough that
// PostgreSQL keeps them out of line (TOAST), random enough that they do
// not compress below that.
const (
	benchDocs    = 512
	benchDocSize = 20 << 10
	benchAttrs   = 64 // attributes f00 ... f63 of every document
)

func benchDoc(r *mrand.Rand, i int) map[string]any {
	doc := map[string]any{"name": "name" + strconv.Itoa(i%50), "n": i % 50, "title": "Plan " + strconv.Itoa(i%7)}
	b := make([]byte, benchDocSize/benchAttrs/2)
	for k := range benchAttrs {
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		doc[fmt.Sprintf("f%02d", k)] = hex.EncodeToString(b)
	}
	return doc
}

// benchDB opens a migrated database of the engine holding the benchmark
// records in one tenant.
func benchDB(b *testing.B, engine string) (*store.DB, int64, store.Collection) {
	b.Helper()
	ctx := context.Background()
	db := testenv.OpenDB(b, testenv.Backend{Name: engine})
	tn, _, err := users.NewTables(db, auth.NewTables(db)).CreateTenant(ctx, "bench", "Bench", users.NewAdmin{Email: "a@example.com", PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5"})
	if err != nil {
		b.Fatal(err)
	}
	c := store.Collection{Table: "records", Resource: "bench-things"}
	r := mrand.New(mrand.NewPCG(1, 2))
	err = db.Tx(ctx, func(q store.Querier) error {
		for i := range benchDocs {
			id, err := db.NewID(ctx, q, tn.ID)
			if err != nil {
				return err
			}
			if _, err := db.InsertRecord(ctx, q, tn.ID, c, id, benchDoc(r, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if engine == "postgres" {
		if _, err := db.ExecContext(ctx, "ANALYZE records"); err != nil {
			b.Fatal(err)
		}
	}
	return db, tn.ID, c
}

// worstWheres are the most expensive criteria the limits allow, each
// evaluated in full on every record: or-terms all false, and-terms all
// true. The attributes f00 ... f63 hold long strings.
func worstWheres() map[string]url.Values {
	attr := func(i int) string { return fmt.Sprintf("f%02d", i%query.MaxAttributes) }
	loose := url.Values{}
	for i := range query.MaxValues {
		loose.Add("name", "x"+strconv.Itoa(i))
	}
	empty := `{"or":[{"name":"x"}` + strings.Repeat(`,{}`, (query.MaxWhereLen-20)/3) + `]}`
	n, c := query.MaxValues, query.MaxConditions
	return map[string]url.Values{
		"or on all attributes":  w(`{"or":[` + many(c, func(i int) string { return fmt.Sprintf(`{%q:{"startsWith":"x%d"}}`, attr(i), i) }) + `]}`),
		"and on all attributes": w(`{"and":[` + many(c, func(i int) string { return fmt.Sprintf(`{%q:{"!=":%d}}`, attr(i), i) }) + `]}`),
		"or on one attribute":   w(`{"or":[` + many(c, func(i int) string { return fmt.Sprintf(`{"f01":{"startsWith":"x%d"}}`, i) }) + `]}`),
		"or of equalities":      w(`{"or":[` + many(n, func(i int) string { return fmt.Sprintf(`{%q:"x%d"}`, attr(i), i) }) + `]}`),
		"in on one attribute":   w(`{"name":{"in":[` + many(n, func(i int) string { return strconv.Quote("x" + strconv.Itoa(i)) }) + `]}}`),
		"loose filter":          loose,
		"declared or":           w(`{"or":[` + many(c, func(i int) string { return fmt.Sprintf(`{"title":{"startsWith":"x%d"}}`, i) }) + `]}`),
		"declared and":          w(`{"and":[` + many(c, func(i int) string { return fmt.Sprintf(`{"title":{">=":"%d"}}`, i%10) }) + `]}`),
		"declared in":           w(`{"title":{"in":[` + many(n, func(i int) string { return strconv.Quote("x" + strconv.Itoa(i)) }) + `]}}`),
		"open sort keys": qs("where", `{"and":[`+many(c, func(i int) string { return fmt.Sprintf(`{%q:{"!=":%d}}`, attr(i), i) })+`]}`,
			"sort", "f00,f01 DESC,f02,f03,f04,f05,f06,f07"),
		"declared sort keys": qs("where", `{"and":[`+many(c, func(i int) string { return fmt.Sprintf(`{%q:{"!=":%d}}`, attr(i), i) })+`]}`,
			"sort", "title,hours DESC,billable,day,project,user,validationStatus,createdAt"),
		"empty objects": w(empty),
		"no criteria":   qs("sort", "f00"), // the floor: every record, sorted
	}
}

// BenchmarkWorstWhere lists 10 MB of large records, as the store does,
// with each of the most expensive criteria the limits allow. The time of
// one list is ns/op; the numbers are for reading, not for asserting.
func BenchmarkWorstWhere(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			if engine == "postgres" {
				if msg := testenv.PostgresUnavailable(b); msg != "" {
					b.Skip(msg)
				}
			}
			db, tenantID, c := benchDB(b, engine)
			for name, params := range worstWheres() {
				b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
					q, err := query.Parse(params, openSchema())
					if err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						_, err := db.ListRecords(context.Background(), tenantID, c, q, func([]byte) error { return nil })
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
