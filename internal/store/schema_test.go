package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// The distribution rules, which keep the PostgreSQL schema ready for
// Citus (migration 00016, decisions: "Citus: ..."):
//   - every table is passed to planwerk_distribute by the migration that
//     creates it (or by 00016, for the tables that came before it), as
//     'tenant' or 'global';
//   - a tenant table has tenant_id, and its primary key, unique indexes
//     and indexes lead with it, but for the declared sweep indexes of
//     housekeeping across tenants;
//   - a foreign key of a tenant table refers to a global table, or to a
//     tenant table through tenant_id; a global table refers to none;
//   - no identity column, no trigger, no function but the helper and
//     the commit's deadline check (00029), which read no table.
//
// goose's own version table stays on the coordinator and is not ours.
const versionTable = "schema_migrations"

// sweepIndexes lead with what housekeeping across tenants purges or
// scans by (migrations 00013 and 00015). Each shard indexes its own rows,
// so they are valid on a distributed table; no request uses them.
var sweepIndexes = map[string]bool{
	"access_tokens_expiry":        true,
	"refresh_tokens_expiry":       true,
	"idempotency_keys_expiry_all": true,
	"changes_at_all":              true,
	"users_email_key":             true,
	"webhooks_lease":              true,
	"account_exports_queue":       true,
}

// schemaFunctions are the functions the schema may hold.
var schemaFunctions = []string{"planwerk_distribute", "planwerk_commit_by"}

var (
	distributeCall = regexp.MustCompile(`planwerk_distribute\('([a-z_]+)', '([a-z]+)'\)`)
	createTable    = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)`)
)

// firstDistributed is the migration that brought planwerk_distribute.
const firstDistributed = 16

// declaredScopes reads each table's scope from the PostgreSQL
// migrations' calls of planwerk_distribute, and reports a migration from
// firstDistributed on that creates a table it does not distribute.
func declaredScopes(t *testing.T) (map[string]string, []string) {
	t.Helper()
	dir := filepath.Join("migrations", "postgres")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	scopes := map[string]string{}
	var problems []string
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, scanMigration(e.Name(), string(raw), scopes)...)
	}
	return scopes, problems
}

// scanMigration adds the scopes a migration declares to scopes and
// reports the tables it creates without declaring them, from
// firstDistributed on.
func scanMigration(name, text string, scopes map[string]string) []string {
	up, _, _ := strings.Cut(text, "-- +goose Down")
	here := map[string]bool{}
	for _, m := range distributeCall.FindAllStringSubmatch(up, -1) {
		scopes[m[1]] = m[2]
		here[m[1]] = true
	}
	version, _ := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
	if version < firstDistributed {
		return nil
	}
	var problems []string
	for _, m := range createTable.FindAllStringSubmatch(up, -1) {
		if !here[m[1]] {
			problems = append(problems, fmt.Sprintf("%s creates table %s without planwerk_distribute in the same step", name, m[1]))
		}
	}
	return problems
}

// schemaProblems checks the live schema of db (its current schema)
// against the rules and the declared scopes.
func schemaProblems(t *testing.T, db *store.DB, scopes map[string]string) []string {
	t.Helper()
	ctx := context.Background()
	var problems []string
	strs := func(query string, args ...any) [][]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]string
		for rows.Next() {
			row := make([]string, len(cols))
			ptrs := make([]any, len(cols))
			for i := range row {
				ptrs[i] = &row[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}

	tables := strs(`SELECT c.relname,
		       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)::text
		  FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		 ORDER BY 1`)
	scopeOf := map[string]string{}
	for _, row := range tables {
		name, hasTenant := row[0], row[1] == "true"
		if name == versionTable {
			continue
		}
		scope, ok := scopes[name]
		switch {
		case !ok:
			problems = append(problems, "table "+name+" is neither tenant-scoped nor global: no migration passes it to planwerk_distribute")
		case scope == "tenant" && !hasTenant:
			problems = append(problems, "tenant table "+name+" has no tenant_id")
		case scope != "tenant" && scope != "global":
			problems = append(problems, "table "+name+" has scope "+scope+", not tenant or global")
		}
		scopeOf[name] = scope
	}

	// Indexes, the primary keys' among them, with their first column
	// ("" for an expression).
	for _, row := range strs(`SELECT t.relname, i.relname, x.indisunique::text,
		       COALESCE((SELECT a.attname FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attnum = x.indkey[0]), '')
		  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		 WHERE t.relnamespace = current_schema()::regnamespace ORDER BY 1, 2`) {
		table, index, unique, lead := row[0], row[1], row[2] == "true", row[3]
		if scopeOf[table] != "tenant" || lead == "tenant_id" {
			continue
		}
		if unique || !sweepIndexes[index] {
			problems = append(problems, fmt.Sprintf("index %s of tenant table %s leads with %q, not tenant_id", index, table, lead))
		}
	}

	for _, row := range strs(`SELECT c.conname, f.relname, r.relname,
		       COALESCE((SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
		                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n), ''),
		       COALESCE((SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
		                  JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n), '')
		  FROM pg_constraint c JOIN pg_class f ON f.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
		 WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace ORDER BY 1`) {
		name, from, to, cols, refCols := row[0], row[1], row[2], row[3], row[4]
		switch {
		case scopeOf[from] == "global" && scopeOf[to] != "global":
			problems = append(problems, fmt.Sprintf("foreign key %s: global table %s refers to tenant table %s", name, from, to))
		case scopeOf[from] == "tenant" && scopeOf[to] == "tenant" &&
			slices.Index(strings.Split(cols, ","), "tenant_id") != slices.Index(strings.Split(refCols, ","), "tenant_id"):
			problems = append(problems, fmt.Sprintf("foreign key %s: %s (%s) refers to %s (%s) other than through tenant_id", name, from, cols, to, refCols))
		case scopeOf[from] == "tenant" && scopeOf[to] == "tenant" && !slices.Contains(strings.Split(cols, ","), "tenant_id"):
			problems = append(problems, fmt.Sprintf("foreign key %s: %s refers to tenant table %s without tenant_id", name, from, to))
		}
	}

	for _, row := range strs(`SELECT table_name, column_name FROM information_schema.columns
		 WHERE table_schema = current_schema() AND is_identity = 'YES' AND table_name <> $1 ORDER BY 1, 2`, versionTable) {
		problems = append(problems, "identity column "+row[0]+"."+row[1]+": draw from a sequence instead")
	}
	for _, row := range strs(`SELECT c.relname, tg.tgname FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
		 WHERE c.relnamespace = current_schema()::regnamespace AND NOT tg.tgisinternal ORDER BY 1, 2`) {
		problems = append(problems, "trigger "+row[1]+" on "+row[0]+": a trigger may read across tenants")
	}
	for _, row := range strs(`SELECT p.proname FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace ORDER BY 1`) {
		if !slices.Contains(schemaFunctions, row[0]) {
			problems = append(problems, "function "+row[0]+": a function may read across tenants")
		}
	}
	return problems
}

// TestSchemaDistributionRules: the migrated PostgreSQL schema keeps the
// distribution rules, and each rule is checked: a migration that broke
// it would be reported.
func TestSchemaDistributionRules(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		if engine(b) != "postgres" {
			t.Skip("the distribution rules are PostgreSQL's (Citus)")
		}
		scopes, problems := declaredScopes(t)
		if len(problems) > 0 {
			t.Errorf("migrations:\n%s", strings.Join(problems, "\n"))
		}
		audit := "-- +goose Up\nCREATE TABLE IF NOT EXISTS audit (tenant_id BIGINT NOT NULL);\n"
		if got := scanMigration("00099_audit.sql", audit, map[string]string{}); len(got) != 1 || !strings.Contains(got[0], "audit") {
			t.Errorf("a migration that creates a table without distributing it: %q, want it reported", got)
		}
		if got := scanMigration("00099_audit.sql", audit+"SELECT planwerk_distribute('audit', 'tenant');\n", map[string]string{}); len(got) != 0 {
			t.Errorf("a migration that creates and distributes a table: %q, want no problem", got)
		}
		db := testenv.OpenDB(t, b)
		if got := schemaProblems(t, db, scopes); len(got) > 0 {
			t.Fatalf("the migrated schema breaks the distribution rules:\n%s", strings.Join(got, "\n"))
		}

		// Each breach, made on top of the migrated schema and undone
		// after, is reported with the object it concerns. (Citus refuses
		// most of them itself, on tables already distributed.)
		var citus bool
		if err := db.QueryRowContext(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
			t.Fatal(err)
		}
		if citus {
			t.Skip("breaches are made on plain PostgreSQL: this database has Citus")
		}
		for _, tc := range []struct {
			name, ddl, undo, want string
		}{
			{"undeclared table", `CREATE TABLE audit (tenant_id BIGINT NOT NULL, id BIGINT NOT NULL, PRIMARY KEY (tenant_id, id))`,
				`DROP TABLE audit`, "table audit is neither"},
			{"tenant table without tenant_id", `CREATE TABLE notes (id BIGINT PRIMARY KEY)`,
				`DROP TABLE notes`, "tenant table notes has no tenant_id"},
			{"primary key not led by tenant_id", `CREATE TABLE notes (tenant_id BIGINT NOT NULL, id BIGINT NOT NULL, PRIMARY KEY (id, tenant_id))`,
				`DROP TABLE notes`, "index notes_pkey of tenant table notes"},
			{"unique index without tenant_id", `CREATE UNIQUE INDEX records_id_only ON records (id)`,
				`DROP INDEX records_id_only`, "index records_id_only"},
			{"expression index", `CREATE INDEX records_day ON records ((doc ->> 'day'))`,
				`DROP INDEX records_day`, "index records_day"},
			{"foreign key around tenant_id", `ALTER TABLE uploads ADD CONSTRAINT uploads_user FOREIGN KEY (tenant_id, record) REFERENCES users (id, tenant_id)`,
				`ALTER TABLE uploads DROP CONSTRAINT uploads_user`, "foreign key uploads_user"},
			{"global table referring to a tenant table", `ALTER TABLE service_secrets ADD COLUMN owner_tenant BIGINT, ADD COLUMN owner BIGINT,
				ADD CONSTRAINT secrets_owner FOREIGN KEY (owner_tenant, owner) REFERENCES users (tenant_id, id)`,
				`ALTER TABLE service_secrets DROP COLUMN owner_tenant, DROP COLUMN owner`, "foreign key secrets_owner"},
			{"identity column", `ALTER TABLE records ADD COLUMN n BIGINT GENERATED BY DEFAULT AS IDENTITY`,
				`ALTER TABLE records DROP COLUMN n`, "identity column records.n"},
			{"trigger", `CREATE TRIGGER records_touch BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()`,
				`DROP TRIGGER records_touch ON records`, "trigger records_touch"},
			{"function", `CREATE FUNCTION tenant_count() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM tenants'`,
				`DROP FUNCTION tenant_count()`, "function tenant_count"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				declared := scopes
				if strings.Contains(tc.ddl, "notes") {
					declared = map[string]string{"notes": "tenant"}
					for k, v := range scopes {
						declared[k] = v
					}
				}
				exec(t, db, tc.ddl)
				got := schemaProblems(t, db, declared)
				exec(t, db, tc.undo)
				if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
					t.Fatalf("after %s: problems %q, want one with %q", tc.ddl, got, tc.want)
				}
			})
		}
	})
}
