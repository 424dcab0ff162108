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
//   - each offer has the highest quality an entry naming it gives, and
//     the default also that of any wildcard entry (*/*, text/*, …): a
//     sheet is only sent to a client that names its type;
//   - the offer of the highest quality above 0 answers; on a tie an
//     offer named beats the default (text/csv, application/json is
//     CSV), and of two named the first named;
//   - none above 0: 406.
func negotiate(req *http.Request, offers ...string) (string, error) {
	accept := req.Header.Values("Accept")
	quality := make([]float64, len(offers))
	named := make([]int, len(offers)) // where the header names each (0: not)
	wildcard, parsed := 0.0, false
	entry := 0
	for _, line := range accept {
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
			if strings.HasSuffix(mt, "/*") {
				wildcard = max(wildcard, q)
				continue
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
	if named[0] == 0 {
		quality[0] = wildcard
	}
	best := -1
	for i := range offers {
		if quality[i] <= 0 {
			continue
		}
		if best < 0 || quality[i] > quality[best] ||
			quality[i] == quality[best] && (best == 0 || named[i] < named[best]) {
			best = i
		}
	}
	if best < 0 {
		return "", errs.New(errs.NotAcceptable, "not_acceptable",
			"this endpoint answers "+strings.Join(offers, ", ")+"; the Accept header accepts none of them")
	}
	return offers[best], nil
}
