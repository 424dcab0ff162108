// Package tally keeps the time totals of each tenant's time entries in
// the database (the table time_totals): seconds and entries per user and
// per project, each per day and per month, and per trackingType. Every
// write of an entry moves them in its own transaction, so that they equal
// the sum over the entries at every commit; a month's or a year's totals
// then read a row per group and period (months whole, days at the
// range's ends) instead of every entry.
package tally

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/jsontext"
)

// The trackingTypes an entry counts under; any other counts toward no
// total.
const (
	Work     = "WORK"
	Worktime = "WORKTIME"
	Break    = "BREAK"
)

// Types are the trackingTypes, in the order answers name them.
var Types = []string{Work, Worktime, Break}

// Querier runs statements: a transaction or a pool of either engine
// (both take $1, $2, … placeholders).
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Entry is what one time entry counts toward: its trackingType, user and
// project (0: none), day and seconds.
type Entry struct {
	Type          string
	User, Project int64
	Day           string
	Seconds       int64
}

// Of reads what a time entry's document counts toward; false when it
// counts toward no total (a trackingType of none of the three, or no
// day).
func Of(doc map[string]any) (Entry, bool) {
	tt, _ := doc["trackingType"].(string)
	day, _ := doc["day"].(string)
	if (tt != Work && tt != Worktime && tt != Break) || len(day) != len(time.DateOnly) {
		return Entry{}, false
	}
	user, _ := jsontext.Whole(doc["user"])
	project, _ := jsontext.Whole(doc["project"])
	return Entry{Type: tt, User: user, Project: project, Day: day, Seconds: Seconds(doc)}, true
}

// Seconds is the time an entry counts: endTime − startTime (whole
// seconds, cut toward zero) when it has both, else its duration; a
// running entry (a startTime alone) counts nothing.
func Seconds(doc map[string]any) int64 {
	start, ok1 := timestamp(doc["startTime"])
	end, ok2 := timestamp(doc["endTime"])
	if ok1 && ok2 {
		return int64(end.Sub(start) / time.Second)
	}
	if s, running := doc["startTime"].(string); running && s != "" {
		return 0
	}
	d, _ := jsontext.Whole(doc["duration"])
	return d
}

func timestamp(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok || s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// key is one row of time_totals: the user's or the project's (dim) time
// of a day or a month (grain).
type key struct {
	dim, grain, period string
	id                 int64
	tt                 string
}

func compareKeys(a, b key) int {
	return cmp.Or(strings.Compare(a.dim, b.dim), strings.Compare(a.grain, b.grain),
		strings.Compare(a.period, b.period), cmp.Compare(a.id, b.id), strings.Compare(a.tt, b.tt))
}

// sums are the moves of a write or a batch, per row.
type sums map[key][2]int64 // seconds, entries

// add counts the entry (sign 1) or takes it off (-1) in its four rows.
func (s sums) add(e Entry, sign int64) {
	for _, k := range []key{
		{"user", "day", e.Day, e.User, e.Type}, {"user", "month", e.Day[:7], e.User, e.Type},
		{"project", "day", e.Day, e.Project, e.Type}, {"project", "month", e.Day[:7], e.Project, e.Type},
	} {
		v := s[k]
		v[0] += sign * e.Seconds
		v[1] += sign
		s[k] = v
	}
}

// Move moves the totals from what the entry counted before (nil: it was
// created) to what it counts now (nil: it is deleted), in q, the
// transaction of the write: one statement. Rows are written in key
// order, so that two writes that move the same rows wait for each other
// instead of deadlocking.
func Move(ctx context.Context, q Querier, tenantID int64, before, after *Entry) error {
	if before != nil && after != nil && *before == *after {
		return nil
	}
	s := sums{}
	if before != nil {
		s.add(*before, -1)
	}
	if after != nil {
		s.add(*after, 1)
	}
	return s.write(ctx, q, tenantID)
}

// rowsPerStatement bounds the rows of one statement: 7 values a row, far
// below either engine's limit of bound values.
const rowsPerStatement = 250

// write adds the sums to the table in key order.
func (s sums) write(ctx context.Context, q Querier, tenantID int64) error {
	keys := make([]key, 0, len(s))
	for k, v := range s {
		if v != [2]int64{} {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	for len(keys) > 0 {
		n := min(len(keys), rowsPerStatement)
		if err := s.upsert(ctx, q, tenantID, keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

func (s sums) upsert(ctx context.Context, q Querier, tenantID int64, keys []key) error {
	var b strings.Builder
	b.WriteString("INSERT INTO time_totals (tenant_id, dim, grain, period, key, tracking_type, seconds, entries) VALUES ")
	args := make([]any, 0, 1+7*len(keys))
	args = append(args, tenantID)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&b, "($1, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		v := s[k]
		args = append(args, k.dim, k.grain, k.period, k.id, k.tt, v[0], v[1])
	}
	b.WriteString(" ON CONFLICT (tenant_id, dim, grain, period, key, tracking_type) DO UPDATE SET " +
		"seconds = time_totals.seconds + excluded.seconds, entries = time_totals.entries + excluded.entries")
	if _, err := q.ExecContext(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("time totals: %w", err)
	}
	return nil
}

// rebuildBatch is how many entries one step of a rebuild reads.
const rebuildBatch = 2000

// Rebuild computes the tenant's totals afresh from its time entries in
// the records table (docColumn: the column that holds a document's
// text), a batch of entries at a time, each batch in a transaction run
// gives it (several for a tenant no one writes to yet, such as one being
// imported; one for a migration). Memory stays bounded by the batch.
func Rebuild(ctx context.Context, run func(fn func(q Querier) error) error, tenantID int64, docColumn string) error {
	err := run(func(q Querier) error {
		if _, err := q.ExecContext(ctx, "DELETE FROM time_totals WHERE tenant_id = $1", tenantID); err != nil {
			return fmt.Errorf("time totals: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for after := int64(0); ; {
		n := 0
		err := run(func(q Querier) error {
			n = 0
			rows, err := q.QueryContext(ctx, `SELECT id, `+docColumn+` FROM records
				WHERE tenant_id = $1 AND resource = 'time-entries' AND id > $2 ORDER BY id LIMIT `+strconv.Itoa(rebuildBatch), tenantID, after)
			if err != nil {
				return fmt.Errorf("time totals: %w", err)
			}
			s := sums{}
			last := after
			for rows.Next() {
				var id int64
				var doc []byte
				if err := rows.Scan(&id, &doc); err != nil {
					rows.Close()
					return fmt.Errorf("time totals: %w", err)
				}
				n++
				last = id
				var m map[string]any
				if err := json.Unmarshal(doc, &m); err != nil {
					rows.Close()
					return fmt.Errorf("time totals: time entry %d: %w", id, err)
				}
				if e, ok := Of(m); ok {
					s.add(e, 1)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("time totals: %w", err)
			}
			if err := s.write(ctx, q, tenantID); err != nil {
				return err
			}
			after = last
			return nil
		})
		if err != nil {
			return err
		}
		if n < rebuildBatch {
			return nil
		}
	}
}

// Row is the sum of one group and trackingType.
type Row struct {
	// Key is the group's user or project (int64, 0: none) or day
	// (string); nil without a grouping.
	Key              any
	Type             string
	Seconds, Entries int64
}

// Sum sums the tenant's totals of the days from … to (YYYY-MM-DD,
// inclusive) per trackingType and per group of groupBy: "user",
// "project", "day" or "" (the totals alone). The whole months of the
// range are read from the monthly rows, its ends from the daily ones: a
// year grouped by user reads twelve rows per user and trackingType.
// Rows of groups whose entries are all gone sum to zero entries; the
// caller leaves them out.
func Sum(ctx context.Context, q Querier, tenantID int64, from, to, groupBy string) ([]Row, error) {
	col, dim := "key", "project"
	switch groupBy {
	case "":
		col = "0"
	case "user":
		dim = "user"
	case "project":
	case "day":
		col = "period"
	default:
		return nil, fmt.Errorf("time totals: no grouping %q", groupBy)
	}
	args := []any{tenantID, dim}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var parts []string
	rows := func(grain, lo, hi string) {
		parts = append(parts, fmt.Sprintf("SELECT %s AS g, tracking_type, seconds, entries FROM time_totals "+
			"WHERE tenant_id = $1 AND dim = $2 AND grain = '%s' AND period >= %s AND period <= %s", col, grain, param(lo), param(hi)))
	}
	if groupBy == "day" {
		rows("day", from, to)
	} else {
		sp := split(from, to)
		for _, r := range sp.days {
			rows("day", r[0], r[1])
		}
		if sp.firstMonth != "" {
			rows("month", sp.firstMonth, sp.lastMonth)
		}
	}
	stmt := "SELECT g, tracking_type, CAST(SUM(seconds) AS BIGINT), CAST(SUM(entries) AS BIGINT) FROM (" +
		strings.Join(parts, " UNION ALL ") + ") t GROUP BY g, tracking_type"
	res, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("time totals: %w", err)
	}
	defer res.Close()
	var out []Row
	for res.Next() {
		var r Row
		var g any
		if err := res.Scan(&g, &r.Type, &r.Seconds, &r.Entries); err != nil {
			return nil, fmt.Errorf("time totals: %w", err)
		}
		switch groupBy {
		case "day":
			switch v := g.(type) {
			case string:
				r.Key = v
			case []byte:
				r.Key = string(v)
			}
		case "user", "project":
			if id, ok := g.(int64); ok && id != 0 {
				r.Key = id
			}
		}
		out = append(out, r)
	}
	return out, res.Err()
}

// span is a range of days cut into the whole months it covers and the
// days at its ends.
type span struct {
	days                  [][2]string // inclusive ranges of days
	firstMonth, lastMonth string      // YYYY-MM; "" when no month is whole
}

// split cuts the days from … to (valid YYYY-MM-DD, from ≤ to) into whole
// months and the days before and after them.
func split(from, to string) span {
	f, _ := time.Parse(time.DateOnly, from)
	t, _ := time.Parse(time.DateOnly, to)
	first := time.Date(f.Year(), f.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !first.Equal(f) {
		first = first.AddDate(0, 1, 0)
	}
	// end is the first day after the last whole month.
	end := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	if t.AddDate(0, 0, 1).Month() != t.Month() {
		end = end.AddDate(0, 1, 0)
	}
	if !first.Before(end) {
		return span{days: [][2]string{{from, to}}}
	}
	var sp span
	if f.Before(first) {
		sp.days = append(sp.days, [2]string{from, first.AddDate(0, 0, -1).Format(time.DateOnly)})
	}
	if !t.Before(end) {
		sp.days = append(sp.days, [2]string{end.Format(time.DateOnly), to})
	}
	sp.firstMonth, sp.lastMonth = first.Format("2006-01"), end.AddDate(0, -1, 0).Format("2006-01")
	return sp
}

// Bucket is a row of Rollup: the sum of one user or project (Key, 0:
// none) in one period and trackingType.
type Bucket struct {
	Key              int64
	Period           string
	Type             string
	Seconds, Entries int64
}

// Rollup sums the tenant's totals of the days from … to (YYYY-MM-DD,
// inclusive) per user or project (dim "user" or "project"; "": neither),
// per period and per trackingType. period "day" gives each day's sums
// (read from the daily rows), "month" and "year" each month's or year's
// (whole months from the monthly rows, the range's ends from the daily
// ones), "" the range's. Rows of groups whose entries are all gone sum to
// zero entries; the caller leaves them out.
func Rollup(ctx context.Context, q Querier, tenantID int64, from, to, dim, period string) ([]Bucket, error) {
	col := "key"
	if dim == "" {
		col, dim = "0", "project"
	}
	var bucket string
	switch period {
	case "":
		bucket = "''"
	case "day":
		bucket = "period"
	case "month":
		bucket = "SUBSTR(period, 1, 7)"
	case "year":
		bucket = "SUBSTR(period, 1, 4)"
	default:
		return nil, fmt.Errorf("time totals: no period %q", period)
	}
	args := []any{tenantID, dim}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var parts []string
	rows := func(grain, lo, hi string) {
		parts = append(parts, fmt.Sprintf("SELECT %s AS g, %s AS b, tracking_type, seconds, entries FROM time_totals "+
			"WHERE tenant_id = $1 AND dim = $2 AND grain = '%s' AND period >= %s AND period <= %s", col, bucket, grain, param(lo), param(hi)))
	}
	if period == "day" {
		rows("day", from, to)
	} else {
		sp := split(from, to)
		for _, r := range sp.days {
			rows("day", r[0], r[1])
		}
		if sp.firstMonth != "" {
			rows("month", sp.firstMonth, sp.lastMonth)
		}
	}
	stmt := "SELECT g, b, tracking_type, CAST(SUM(seconds) AS BIGINT), CAST(SUM(entries) AS BIGINT) FROM (" +
		strings.Join(parts, " UNION ALL ") + ") t GROUP BY g, b, tracking_type"
	res, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("time totals: %w", err)
	}
	defer res.Close()
	var out []Bucket
	for res.Next() {
		var b Bucket
		if err := res.Scan(&b.Key, &b.Period, &b.Type, &b.Seconds, &b.Entries); err != nil {
			return nil, fmt.Errorf("time totals: %w", err)
		}
		out = append(out, b)
	}
	return out, res.Err()
}
