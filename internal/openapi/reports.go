package openapi

// timeReportOK is the time report's answer in each type it is given in.
func timeReportOK() okResp {
	sheet := "a header row, then one row per group of the deepest level (one row of the totals without groupings): " +
		"a column per grouping, each `user`, `project` and `task` column followed by its label (`userName`: the " +
		"user's name, else email; `projectName`, `taskName`: the record's name), then per trackingType its seconds " +
		"and hours (seconds / 3600, two decimals), then entries. Text that begins with `=`, `+`, `-`, `@`, a tab or a " +
		"carriage return is written with a leading `'`."
	return okResp{"200", &Response{
		Description: "The report: JSON, or as `Accept` asks CSV, XLSX or PDF of the same numbers.",
		Content: map[string]MediaType{
			"application/json": {Schema: schemaRef("TimeReport")},
			"text/csv":         {Schema: Schema{"type": "string", "description": "RFC 4180 (CRLF line ends): " + sheet}},
			"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {Schema: Schema{"type": "string",
				"format": "binary", "description": "A workbook of one sheet, " + sheet + " Numbers are numbers."}},
			"application/pdf": {Schema: Schema{"type": "string", "format": "binary",
				"description": "A printable A4 report: the tenant, the period, the groupings and rounding, every group " +
					"with its label and hours per trackingType, and the totals."}},
		}}}
}
