package timetrack

import (
	"slices"
	"strings"
	"testing"

	"planwerk/internal/records"
)

// entryFields are the fields whose presence the TimeEntry tables rule
// (docs/api.md "Time entry fields").
var entryFields = []string{"project", "task", "duration", "sorting", "startTime", "endTime"}

// sample is a valid value of each of entryFields, as Apply stores it.
var sample = map[string]any{
	"project": int64(1), "task": int64(2), "duration": int64(3600), "sorting": int64(1),
	"startTime": "2026-03-02T08:00:00.000Z", "endTime": "2026-03-02T09:00:00.000Z",
}

// fieldTable is the TimeEntry tables of docs/api.md "Time entry fields":
// under each trackingType,
// timerMode and useWorktime, the fields an entry needs and the fields it
// must omit; the others may be sent or not.
var fieldTable = []struct {
	trackingType, timerMode string
	useWorktime             bool
	need, omit              []string
}{
	// WORK: project and task; the time fields of the timerMode. A running
	// entry has no endTime yet.
	{Work, Duration, false, []string{"project", "task", "duration", "sorting"}, []string{"startTime", "endTime"}},
	{Work, Duration, true, []string{"project", "task", "duration", "sorting"}, []string{"startTime", "endTime"}},
	{Work, StartTimeEnd, false, []string{"project", "task", "startTime"}, []string{"duration", "sorting"}},
	{Work, StartTimeEnd, true, []string{"project", "task", "startTime"}, []string{"duration", "sorting"}},
	// WORKTIME: always startTime and endTime, whatever the timerMode.
	{Worktime, Duration, false, []string{"startTime", "endTime"}, []string{"project", "task", "duration", "sorting"}},
	{Worktime, Duration, true, []string{"startTime", "endTime"}, []string{"project", "task", "duration", "sorting"}},
	{Worktime, StartTimeEnd, false, []string{"startTime", "endTime"}, []string{"project", "task", "duration", "sorting"}},
	{Worktime, StartTimeEnd, true, []string{"startTime", "endTime"}, []string{"project", "task", "duration", "sorting"}},
	// BREAK: without worktime as the timerMode says; with worktime
	// startTime and endTime, and sorting may still be included.
	{Break, Duration, false, []string{"duration", "sorting"}, []string{"project", "task", "startTime", "endTime"}},
	{Break, Duration, true, []string{"startTime", "endTime"}, []string{"project", "task", "duration"}},
	{Break, StartTimeEnd, false, []string{"startTime"}, []string{"project", "task", "duration", "sorting"}},
	{Break, StartTimeEnd, true, []string{"startTime", "endTime"}, []string{"project", "task", "duration"}},
}

// named returns the sorted fields of problems, and fails on a problem
// without a message.
func named(t *testing.T, doc map[string]any, st Settings) ([]string, map[string]string) {
	t.Helper()
	var fields []string
	messages := map[string]string{}
	for _, p := range fieldRules(records.Doc(doc).View(), st) {
		if p.Message == "" {
			t.Errorf("%v: problem of %s without a message", doc, p.Field)
		}
		fields = append(fields, p.Field)
		messages[p.Field] = p.Message
	}
	slices.Sort(fields)
	return fields, messages
}

// TestFieldRulesTable tries every combination of present fields under
// every row of fieldTable: each needed field that is missing and each
// field to omit that is sent is named once, and nothing else.
func TestFieldRulesTable(t *testing.T) {
	t.Parallel()
	for _, row := range fieldTable {
		st := Settings{TimerMode: row.timerMode, UseWorktime: row.useWorktime}
		for mask := 0; mask < 1<<len(entryFields); mask++ {
			doc := map[string]any{"trackingType": row.trackingType, "day": "2026-03-02"}
			var want []string
			for i, f := range entryFields {
				sent := mask&(1<<i) != 0
				if sent {
					doc[f] = sample[f]
				}
				if (!sent && slices.Contains(row.need, f)) || (sent && slices.Contains(row.omit, f)) {
					want = append(want, f)
				}
			}
			slices.Sort(want)
			got, messages := named(t, doc, st)
			if !slices.Equal(got, want) {
				t.Errorf("%s under %s, useWorktime %v, sending %v: problems name %v, want %v",
					row.trackingType, row.timerMode, row.useWorktime, sent(doc), got, want)
			}
			for f, msg := range messages {
				wantWord := "is required"
				if doc[f] != nil {
					wantWord = "must be omitted"
				}
				if !strings.Contains(msg, wantWord) || !strings.Contains(msg, row.trackingType) {
					t.Errorf("%s under %s: %s %q does not say %q for %s entries", row.trackingType, row.timerMode, f, msg, wantWord, row.trackingType)
				}
			}
		}
	}
}

// sent lists the entry fields doc has, for messages.
func sent(doc map[string]any) []string {
	var out []string
	for _, f := range entryFields {
		if doc[f] != nil {
			out = append(out, f)
		}
	}
	return out
}

// TestFieldRulesValues: the rules on values beside presence, each field
// named at most once, and what fieldRules leaves to the attribute types.
func TestFieldRulesValues(t *testing.T) {
	t.Parallel()
	const start, end = "2026-03-02T08:00:00.000Z", "2026-03-02T09:00:00.000Z"
	duration := Settings{TimerMode: Duration}
	startEnd := Settings{TimerMode: StartTimeEnd}
	worktime := Settings{TimerMode: Duration, UseWorktime: true}
	entry := func(tt string, kv ...any) map[string]any {
		doc := map[string]any{"trackingType": tt, "day": "2026-03-02"}
		if tt == Work {
			doc["project"], doc["task"] = int64(1), int64(2)
		}
		for i := 0; i < len(kv); i += 2 {
			doc[kv[i].(string)] = kv[i+1]
		}
		return doc
	}
	cases := []struct {
		name     string
		doc      map[string]any
		settings Settings
		want     map[string]string // field → a word its message has
	}{
		{"zero duration", entry(Work, "duration", int64(0), "sorting", int64(0)), duration, nil},
		{"negative sorting", entry(Work, "duration", int64(60), "sorting", int64(-3)), duration, nil},
		{"negative duration", entry(Work, "duration", int64(-60), "sorting", int64(1)), duration, map[string]string{"duration": "negative"}},
		{"negative BREAK duration", entry(Break, "duration", int64(-1), "sorting", int64(1)), duration, map[string]string{"duration": "negative"}},
		{"duration of 366 days", entry(Work, "duration", int64(31622400), "sorting", int64(1)), duration, nil},
		{"duration beyond 366 days", entry(Work, "duration", int64(31622401), "sorting", int64(1)), duration, map[string]string{"duration": "at most"}},
		{"BREAK duration of 2^53", entry(Break, "duration", int64(1)<<53, "sorting", int64(1)), duration, map[string]string{"duration": "at most"}},
		{"negative duration without sorting", entry(Work, "duration", int64(-60)), duration,
			map[string]string{"duration": "negative", "sorting": "required"}},
		// A field that must be omitted is not also told its value is wrong.
		{"negative duration to omit", entry(Work, "startTime", start, "duration", int64(-60)), startEnd, map[string]string{"duration": "omitted"}},
		{"WORKTIME negative duration to omit", entry(Worktime, "startTime", start, "endTime", end, "duration", int64(-5)), duration, map[string]string{"duration": "omitted"}},
		{"running WORK entry", entry(Work, "startTime", start), startEnd, nil},
		{"WORK endTime after startTime", entry(Work, "startTime", start, "endTime", end), startEnd, nil},
		{"WORK endTime before startTime", entry(Work, "startTime", end, "endTime", start), startEnd, map[string]string{"endTime": "after startTime"}},
		{"WORKTIME endTime equals startTime", entry(Worktime, "startTime", start, "endTime", start), duration, map[string]string{"endTime": "after startTime"}},
		{"WORKTIME reversed times with duration", entry(Worktime, "startTime", end, "endTime", start, "duration", int64(-5)), startEnd,
			map[string]string{"endTime": "after startTime", "duration": "omitted"}},
		{"BREAK reversed times under worktime", entry(Break, "startTime", end, "endTime", start), worktime, map[string]string{"endTime": "after startTime"}},
		{"BREAK reversed times and sorting under worktime", entry(Break, "startTime", end, "endTime", start, "sorting", int64(1)), worktime, map[string]string{"endTime": "after startTime"}},
		// Under DURATION reversed times are named once, as times to omit.
		{"WORK reversed times under DURATION", entry(Work, "startTime", end, "endTime", start), duration,
			map[string]string{"duration": "required", "sorting": "required", "startTime": "omitted", "endTime": "omitted"}},
		{"BREAK reversed times under DURATION", entry(Break, "startTime", end, "endTime", start), duration,
			map[string]string{"duration": "required", "sorting": "required", "startTime": "omitted", "endTime": "omitted"}},
		// The sorting a DURATION entry lacks: the message says what is wanted.
		{"WORK without sorting", entry(Work, "duration", int64(60)), duration, map[string]string{"sorting": "DURATION"}},
		{"BREAK without sorting", entry(Break, "duration", int64(60)), duration, map[string]string{"sorting": "DURATION"}},
		{"WORK without project", map[string]any{"trackingType": Work, "task": int64(2), "duration": int64(60), "sorting": int64(1)}, duration,
			map[string]string{"project": "WORK"}},
		{"BREAK with project under worktime", entry(Break, "project", int64(1), "startTime", start, "endTime", end), worktime,
			map[string]string{"project": "omitted"}},
		{"BREAK duration under worktime", entry(Break, "duration", int64(900)), worktime,
			map[string]string{"duration": "worktime", "startTime": "worktime", "endTime": "worktime"}},
		// An unknown trackingType is the enum's to refuse, not the field rules'.
		{"unknown trackingType", entry("OVERTIME", "duration", int64(60)), duration, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, messages := named(t, c.doc, c.settings)
			var want []string
			for f := range c.want {
				want = append(want, f)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("problems name %v, want %v (%v)", got, want, messages)
			}
			for f, word := range c.want {
				if !strings.Contains(messages[f], word) {
					t.Errorf("%s: message %q does not say %q", f, messages[f], word)
				}
			}
		})
	}
}
