package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"planwerk/internal/query"
)

// TimeReport is a sum of time entries in the database, grouped: what
// GET /v1/reports/time asks when the rollup of time totals cannot answer
// it (criteria, rounding, levels it does not keep).
type TimeReport struct {
	// Where selects the entries: the range of days first, so that the
	// day index bounds the rows read, then the client's criteria and the
	// caller's visibility.
	Where query.Node
	// Levels are the groupings, outermost first.
	Levels []ReportLevel
	// Step rounds each entry's seconds to a multiple of it (0: none) the
	// way Round says.
	Step  int64
	Round string // "up", "down" or "nearest"
	// MaxRows ends the read after that many rows (a row per group and
	// trackingType): the caller answers that the report is too large.
	MaxRows int
}

// ReportLevel is one grouping: an attribute of the entries (Attr, whose
// name is bound), a column of the table (Column, a constant of the
// schema's: its text), or a period of their day (Bucket "day", "week",
// "month" or "year").
type ReportLevel struct {
	Attr   string
	Column string
	Bucket string
}

// ReportRow is the sum of one group and trackingType. Keys are the
// group's keys per level: for an attribute its JSON text, for a period
// its name ("2026-W05"), for a column its text; nil for an entry
// without the attribute.
type ReportRow struct {
	Keys             []*string
	Type             string
	Seconds, Entries int64
}

// SumTimeEntries sums the tenant's time entries of WORK, WORKTIME and
// BREAK that rep selects, per group of its levels and per trackingType,
// in one GROUP BY of the database, and calls row with each sum. The
// seconds of an entry are internal/tally's: endTime − startTime when it
// has both, else its duration, and nothing while it runs.
func (db *DB) SumTimeEntries(ctx context.Context, q Querier, tenantID int64, rep TimeReport, row func(ReportRow) error) error {
	if q == nil {
		q = db.read
	}
	e := db.dialect.reportExprs()
	var s query.SQL
	var cols []string
	s.Write("SELECT ")
	for i := range rep.Levels {
		col := "k" + strconv.Itoa(i)
		cols = append(cols, col)
		s.Write(col, ", ")
	}
	s.Write("tt, CAST(SUM(", rounded("s0", rep.Step, rep.Round), ") AS BIGINT), COUNT(*) FROM (SELECT ")
	for i, l := range rep.Levels {
		switch {
		case l.Bucket != "":
			s.Write(e.bucket(l.Bucket))
		case l.Column != "":
			s.Write("CAST(", l.Column, " AS TEXT)")
		default:
			s.Write(e.attr(&s, l.Attr))
		}
		s.Write(" AS ", cols[i], ", ")
	}
	s.Write(e.text("trackingType"), " AS tt, ", e.seconds(), " AS s0 FROM records WHERE ")
	Collection{Table: "records", Resource: "time-entries"}.scope(&s, tenantID)
	s.Write(" AND ")
	db.dialect.compiler().Where(&s, rep.Where)
	s.Write(") AS e WHERE tt IN ('WORK', 'WORKTIME', 'BREAK') GROUP BY ", strings.Join(append(cols, "tt"), ", "))
	if rep.MaxRows > 0 {
		s.Write(" LIMIT ", strconv.Itoa(rep.MaxRows+1))
	}
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return fmt.Errorf("time report: %w", err)
	}
	defer rows.Close()
	n := len(rep.Levels)
	for rows.Next() {
		keys := make([]sql.NullString, n)
		dest := make([]any, 0, n+3)
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		var r ReportRow
		dest = append(dest, &r.Type, &r.Seconds, &r.Entries)
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("time report: %w", err)
		}
		r.Keys = make([]*string, n)
		for i, k := range keys {
			if k.Valid {
				r.Keys[i] = &k.String
			}
		}
		if err := row(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("time report: %w", err)
	}
	return nil
}

// rounded is the SQL of seconds x rounded to a multiple of step (none
// when 0): down and up to the next multiple below or above, nearest to
// the closer one (halves up). step is Planwerk's number, never client
// text.
func rounded(x string, step int64, mode string) string {
	if step <= 0 {
		return x
	}
	st := strconv.FormatInt(step, 10)
	switch mode {
	case "up":
		return "(-" + floorDiv("(-"+x+")", st) + " * " + st + ")"
	case "nearest":
		return "(" + floorDiv("("+x+" + "+strconv.FormatInt(step/2, 10)+")", st) + " * " + st + ")"
	}
	return "(" + floorDiv(x, st) + " * " + st + ")"
}

// floorDiv is x divided by the positive st, rounded down: both engines
// cut an integer division toward zero.
func floorDiv(x, st string) string {
	return "(CASE WHEN " + x + " >= 0 THEN " + x + " / " + st + " ELSE -((-" + x + " + " + st + " - 1) / " + st + ") END)"
}

// reportExprs is what the engines write differently in a report.
type reportExprs interface {
	// attr is the JSON text of an attribute (its name bound), NULL when
	// the entry has none or null.
	attr(s *query.SQL, name string) string
	// text is the string value of a declared attribute (a constant).
	text(name string) string
	// bucket is the period of the entry's day.
	bucket(period string) string
	// seconds is the time the entry counts.
	seconds() string
}

type sqliteReport struct{}

func (sqliteReport) attr(s *query.SQL, name string) string {
	return "NULLIF(doc -> " + s.Arg(`$."`+name+`"`) + ", 'null')"
}

func (sqliteReport) text(name string) string { return "json_extract(doc, '$." + name + "')" }

func (r sqliteReport) bucket(period string) string {
	day := r.text("day")
	switch period {
	case "week":
		return "strftime('%G-W%V', " + day + ")"
	case "month":
		return "substr(" + day + ", 1, 7)"
	case "year":
		return "substr(" + day + ", 1, 4)"
	}
	return day
}

// seconds: SQLite reads a timestamp to the millisecond (unixepoch with
// subsec); the difference in milliseconds, cut to whole seconds, is
// Go's time.Duration cut to seconds.
func (r sqliteReport) seconds() string {
	st, et := r.text("startTime"), r.text("endTime")
	isText := func(a string) string {
		return "json_type(doc, '$." + a + "') = 'text' AND " + r.text(a) + " <> ''"
	}
	return "(CASE WHEN " + isText("startTime") + " AND " + isText("endTime") +
		" THEN COALESCE(CAST(round((unixepoch(" + et + ", 'subsec') - unixepoch(" + st + ", 'subsec')) * 1000) AS INTEGER) / 1000, 0)" +
		" WHEN " + isText("startTime") + " THEN 0" +
		" WHEN json_type(doc, '$.duration') = 'integer' THEN json_extract(doc, '$.duration') ELSE 0 END)"
}

type postgresReport struct{}

func (postgresReport) attr(s *query.SQL, name string) string {
	return "(NULLIF(doc -> " + s.Arg(name) + "::text, 'null'::jsonb))::text"
}

func (postgresReport) text(name string) string { return "(doc ->> '" + name + "')" }

func (r postgresReport) bucket(period string) string {
	day := r.text("day")
	switch period {
	case "week":
		return "to_char((" + day + ")::date, 'IYYY-\"W\"IW')"
	case "month":
		return "substr(" + day + ", 1, 7)"
	case "year":
		return "substr(" + day + ", 1, 4)"
	}
	return day
}

func (r postgresReport) seconds() string {
	isText := func(a string) string {
		return "jsonb_typeof(doc -> '" + a + "') = 'string' AND " + r.text(a) + " <> ''"
	}
	return "(CASE WHEN " + isText("startTime") + " AND " + isText("endTime") +
		" THEN trunc(EXTRACT(EPOCH FROM (" + r.text("endTime") + "::timestamptz - " + r.text("startTime") + "::timestamptz)))::bigint" +
		" WHEN " + isText("startTime") + " THEN 0" +
		" WHEN jsonb_typeof(doc -> 'duration') = 'number' THEN trunc(" + r.text("duration") + "::numeric)::bigint ELSE 0 END)"
}
