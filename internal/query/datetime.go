package query

import (
	"errors"
	"time"
)

// TimestampLayout is the stored and returned form of a date-time: UTC
// with milliseconds. Its text sorts in time order for the years 0000 to
// 9999, so the store compares and sorts date-times as text.
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// TimestampHint says what a date-time attribute accepts.
const TimestampHint = "an RFC 3339 date-time such as 2026-03-02T08:00:00Z or 2026-03-02T09:00:00.5+01:00"

// Reasons a date-time is refused, beyond its form.
var (
	errLeapSecond = errors.New("second 60 is a leap second only at 23:59:60 UTC on the last day of a month")
	errYearRange  = errors.New("the time in UTC must be within the years 0000 to 9999")
	errForm       = errors.New("must be " + TimestampHint)
)

// NormalTimestamp reads an RFC 3339 date-time — "T" or "t", seconds
// with 0 to 9 fractional digits, "Z", "z" or a numeric offset — and
// returns it in its stored form, TimestampLayout. Digits beyond the
// milliseconds are cut off, not rounded: a later instant never gets an
// earlier stored form. A leap second (23:59:60 UTC on the last day of a
// month) is stored as the last millisecond before it, 23:59:59.999Z.
// The error says what is wrong.
func NormalTimestamp(s string) (string, error) {
	// YYYY-MM-DDTHH:MM:SS, then [.F{1,9}], then Z or ±HH:MM.
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' ||
		(s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return "", errForm
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	second, ok6 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return "", errForm
	}
	rest := s[19:]
	nanos := 0
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		frac := rest[1:n]
		if len(frac) == 0 || len(frac) > 9 {
			return "", errForm
		}
		nanos, _ = digits(frac)
		for range 9 - len(frac) {
			nanos *= 10
		}
		rest = rest[n:]
	}
	offset := 0 // seconds east of UTC
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okH := digits(rest[1:3])
		om, okM := digits(rest[4:6])
		if !okH || !okM || oh > 23 || om > 59 {
			return "", errForm
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset // -00:00 is UTC with the local offset unknown
		}
	default:
		return "", errForm
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 60 {
		return "", errForm
	}
	leap := second == 60
	if leap {
		second, nanos = 59, 999_999_999
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, nanos, time.UTC).
		Add(-time.Duration(offset) * time.Second)
	if leap && (t.Hour() != 23 || t.Minute() != 59 || t.AddDate(0, 0, 1).Day() != 1) {
		return "", errLeapSecond
	}
	if t.Year() < 0 || t.Year() > 9999 {
		return "", errYearRange
	}
	// Format cuts the fraction to milliseconds; it does not round.
	return t.Format(TimestampLayout), nil
}

// digits reads a run of decimal digits, refusing anything else.
func digits(s string) (int, bool) {
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, len(s) > 0
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
