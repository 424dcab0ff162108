package httpapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"planwerk/internal/errs"
)

// Media types of answers.
const (
	jsonMedia = "application/json"
	csvMedia  = "text/csv"
	xlsxMedia = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// negotiate chooses the media type of an answer among offers, the first
// of which (JSON) is the default, by the request's Accept header:
//   - no header, or none of its entries parses: the default;
//   - each offer has the highest quality of the entries naming it; one
//     not named, that of a type wildcard of its type (text/* for CSV,
//     application/* for JSON, XLSX and PDF), and the default that of */*
//     too: a sheet is sent only to a client that names it or its type;
//   - the offer of the highest quality above 0 answers; on a tie an
//     offer named beats one not named and the default (text/csv,
//     application/json is CSV), of two named the first named, of two not
//     named the first offer;
//   - none above 0: 406.
func negotiate(req *http.Request, offers ...string) (string, error) {
	quality := make([]float64, len(offers))
	named := make([]int, len(offers)) // where the header names each (0: not)
	types := map[string]float64{}     // the quality of each type wildcard
	star, starred, parsed := 0.0, false, false
	entry := 0
	for _, line := range req.Header.Values("Accept") {
		for item := range strings.SplitSeq(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err != nil || !strings.Contains(mt, "/") {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			parsed = true
			entry++
			switch typ, sub, _ := strings.Cut(mt, "/"); {
			case mt == "*/*":
				star, starred = max(star, q), true
			case sub == "*":
				types[typ] = max(types[typ], q)
			}
			for i, o := range offers {
				if mt == o {
					if named[i] == 0 {
						named[i] = entry
					}
					quality[i] = max(quality[i], q)
				}
			}
		}
	}
	if !parsed {
		return offers[0], nil
	}
	for i, o := range offers {
		if named[i] != 0 {
			continue
		}
		typ, _, _ := strings.Cut(o, "/")
		if q, ok := types[typ]; ok {
			quality[i] = q
		} else if i == 0 && starred {
			quality[i] = star
		}
	}
	// better says whether offer i wins over offer b on a tie.
	better := func(i, b int) bool {
		switch {
		case named[i] != 0 && named[b] != 0:
			return b == 0 || i != 0 && named[i] < named[b]
		case named[i] != 0:
			return true
		case named[b] != 0:
			return false
		}
		return i < b
	}
	best := -1
	for i := range offers {
		if quality[i] <= 0 {
			continue
		}
		if best < 0 || quality[i] > quality[best] || quality[i] == quality[best] && better(i, best) {
			best = i
		}
	}
	if best < 0 {
		return "", errs.New(errs.NotAcceptable, "not_acceptable",
			"this endpoint answers "+strings.Join(offers, ", ")+"; the Accept header accepts none of them")
	}
	return offers[best], nil
}
