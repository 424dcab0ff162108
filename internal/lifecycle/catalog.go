package lifecycle

import (
	"maps"
	"slices"

	"planwerk/internal/auth"
	"planwerk/internal/webhooks"
)

// The archive's catalog: every table that holds a tenant's rows is either
// exported (with each of its columns, or a reason to leave one out) or
// skipped with a reason. A test compares it with the live schema of both
// engines, so that a table or column added later cannot be left out of
// the archive unnoticed.

// kind is how a column's values are written in the archive (docs/
// tenant-archive.md "Values").
type kind int

const (
	kindInt  kind = iota // a JSON number: a 64-bit integer
	kindText             // a JSON string, the text as stored
	kindBool             // true or false (SQLite's 0 and 1)
	kindBlob             // a JSON string: the bytes in standard base64
	kindDoc              // a JSON document, written as the JSON value itself
)

// column is a column the archive carries.
type column struct {
	name string
	kind kind
	// secret: a password hash or a secret, left out (null) of an archive
	// made without secrets.
	secret bool
	// id: a record id the tenant drew (or one an entry names), which the
	// ids drawn after an import must exceed.
	id bool
	// ref: an id that names a row (a user, a record), which the service
	// draws as it draws id: in 1 … maxID, never beyond.
	ref bool
	// check refuses a value the service could not have written, beyond
	// its kind (nil: any of the kind); it sees non-null values only.
	check func(v any) error
}

// table is a table whose rows of the tenant the archive carries, as the
// member NAME.jsonl, a row a line.
type table struct {
	name    string
	columns []column
	// key orders the rows (the primary key after tenant_id) and batches
	// their erasure.
	key string
	// skipped are the table's columns the archive leaves out, with why.
	skipped map[string]string
	// fixed are columns an import sets to a value of its own rather than
	// the source's: the state of a webhook's deliveries, which the new
	// change feed starts afresh (see webhooks).
	fixed []fixedColumn
	// tagged: the table keeps each row's entity tag beside its doc (the
	// column etag), which the archive leaves out and an import computes
	// from the doc, so that the imported rows' reads hash nothing.
	tagged bool
	// most is the most rows of a tenant the service keeps (0: no cap).
	most int64
	// since is the format version whose archives first hold the table's
	// member (0: every version).
	since int
}

// fixedColumn is a column an import sets to a value of its own.
type fixedColumn struct {
	name  string
	value any
}

// tenantTable is the tenants row, the archive's first table: one row,
// keyed by the tenant's id rather than by tenant_id. Its member also
// carries last_id (tenantLastID), the highest id the tenant had drawn.
var tenantTable = table{
	name: "tenant",
	columns: []column{
		{name: "slug", kind: kindText}, {name: "name", kind: kindText}, {name: "storage_bytes", kind: kindInt, check: notNegative},
		{name: "created_at", kind: kindText, check: timestamp}, {name: "updated_at", kind: kindText, check: timestamp},
	},
	skipped: map[string]string{"id": "the database the tenant is imported into gives it an id of its own"},
}

// tenantLastID is the tenant member's extra member: the highest id the
// tenant had drawn when it was exported.
const tenantLastID = "last_id"

// etagSkipped says why the stored entity tags stay out of the archive.
const etagSkipped = "the tag of doc's content, stored to spare reads its hash: an import computes it from doc (tagged)"

// tables are the tables whose rows the archive carries after the tenant
// row, in the archive's order: a table's member comes before those that
// name its rows.
var tables = []table{
	{
		name:    "tenant_settings",
		columns: []column{{name: "timer_mode", kind: kindText, check: oneOf("DURATION", "START_TIME_END_TIME")}, {name: "use_worktime", kind: kindBool}},
		key:     "tenant_id",
	},
	{
		name: "users",
		columns: []column{
			{name: "id", kind: kindInt, id: true}, {name: "email", kind: kindText}, {name: "email_key", kind: kindText},
			{name: "password_hash", kind: kindText, secret: true}, {name: "is_admin", kind: kindBool}, {name: "is_owner", kind: kindBool},
			{name: "doc", kind: kindDoc}, {name: "created_at", kind: kindText, check: timestamp}, {name: "updated_at", kind: kindText, check: timestamp},
		},
		key:     "id",
		skipped: map[string]string{"doc_text": "PostgreSQL generates it from doc", "etag": etagSkipped},
		tagged:  true,
	},
	{
		name: "records",
		columns: []column{
			{name: "id", kind: kindInt, id: true}, {name: "resource", kind: kindText}, {name: "doc", kind: kindDoc},
			{name: "created_at", kind: kindText, check: timestamp}, {name: "updated_at", kind: kindText, check: timestamp},
		},
		key:     "id",
		skipped: map[string]string{"doc_text": "PostgreSQL generates it from doc", "etag": etagSkipped},
		tagged:  true,
	},
	{
		name: "uploads",
		columns: []column{
			{name: "id", kind: kindInt, id: true}, {name: "model", kind: kindText, check: oneOf("document", "expense")}, {name: "record", kind: kindInt, ref: true},
			{name: "filename", kind: kindText}, {name: "content_type", kind: kindText}, {name: "size", kind: kindInt, check: notNegative},
			{name: "created_at", kind: kindText, check: timestamp},
		},
		key: "id",
		skipped: map[string]string{"storage_key": "the file is the member files/ID; an import stores it under a key " +
			"of the new tenant's"},
	},
	{
		name: "api_clients",
		columns: []column{
			{name: "id", kind: kindInt, id: true}, {name: "client_id", kind: kindText}, {name: "secret_hash", kind: kindBlob, secret: true},
			{name: "name", kind: kindText}, {name: "user_id", kind: kindInt, ref: true}, {name: "scope", kind: kindText, check: oneOf("read", "read write")},
			{name: "created_at", kind: kindText, check: timestamp}, {name: "created_by", kind: kindInt, ref: true},
		},
		key:  "id",
		most: auth.MaxClients,
	},
	{
		name: "webhooks",
		columns: []column{
			{name: "id", kind: kindInt, id: true}, {name: "url", kind: kindText, check: webURL}, {name: "resources", kind: kindText, check: jsonStrings},
			{name: "secret", kind: kindText, secret: true}, {name: "enabled", kind: kindBool}, {name: "created_at", kind: kindText, check: timestamp},
		},
		key: "id",
		skipped: map[string]string{
			"position":      "a position in the source's change feed; the imported tenant's feed starts afresh (0)",
			"failing_since": "the state of deliveries, which start afresh",
			"retry_at":      "the state of deliveries, which start afresh",
			"lease_until":   "held by an instance of the source",
			"lease_holder":  "held by an instance of the source",
		},
		fixed: []fixedColumn{{name: "position", value: int64(0)}},
		most:  webhooks.MaxWebhooks,
	},
	{
		// Before the audit log, whose first entry must follow it.
		name:    "audit_purges",
		columns: []column{{name: "seq", kind: kindInt, ref: true}, {name: "hash", kind: kindText, check: auditHash}},
		key:     "tenant_id",
		most:    1,
		since:   2,
	},
	{
		name: "audit_log",
		columns: []column{
			{name: "seq", kind: kindInt, ref: true}, {name: "at", kind: kindText, check: timestamp}, {name: "actor_user", kind: kindInt, ref: true},
			{name: "actor_client", kind: kindInt, ref: true}, {name: "via", kind: kindText, check: oneOf("api", "cli")}, {name: "request_id", kind: kindText},
			{name: "reason", kind: kindText}, {name: "resource", kind: kindText}, {name: "record_id", kind: kindInt, id: true},
			{name: "op", kind: kindText, check: oneOf("create", "update", "delete")}, {name: "changed", kind: kindText, check: jsonStrings},
			{name: "after", kind: kindText, check: jsonObject}, {name: "before", kind: kindText, check: jsonObject},
			{name: "before_seq", kind: kindInt, ref: true}, {name: "prev_hash", kind: kindText, check: auditHash},
			{name: "hash", kind: kindText, check: auditHash},
		},
		key: "seq",
	},
}

// skippedTable is a table with tenant rows the archive leaves out.
type skippedTable struct {
	// engine is the one engine that has the table ("" for both).
	engine string
	reason string
}

// skippedTables are the tables of tenant rows the archive does not carry.
var skippedTables = map[string]skippedTable{
	"tenant_sequences":   {engine: "sqlite", reason: "the tenant member's last_id carries the counter"},
	"access_tokens":      {reason: "sign-ins end with the move: users sign in again, API clients ask for new tokens"},
	"refresh_tokens":     {reason: "sign-ins end with the move"},
	"idempotency_keys":   {reason: "kept for a day to answer retries of requests to the source"},
	"changes":            {reason: "the imported tenant's change feed starts afresh"},
	"change_positions":   {reason: "the imported tenant's change feed starts afresh"},
	"webhook_deliveries": {reason: "deliveries of the source's change feed"},
	"tenant_states":      {reason: "an import makes its tenant importing, then active"},
	"locks":              {engine: "postgres", reason: "rows that serialise transactions, made again when needed"},
	"account_exports":    {reason: "the source's exports of its data, whose archives stay with the source"},
	"time_totals":        {reason: "sums of the time entries, which an import computes from them"},
}

// tableByName finds an exported table.
func tableByName(name string) (table, bool) {
	for _, t := range tables {
		if t.name == name {
			return t, true
		}
	}
	return table{}, false
}

// sortedKeys are the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Tables names the archive's tables, in the archive's order: the
// tenant's row, then the tables of its rows.
func Tables() []string { return append([]string{tenantTable.name}, tableNames()...) }
