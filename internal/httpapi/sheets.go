package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	"planwerk/internal/errs"
	"planwerk/internal/jsontext"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/sheet"
)

// Lists as sheets (docs/api.md "CSV and XLSX"): the records of the JSON
// answer, one row each, one column per attribute.

// listMedia are the media types a list answers in, the default first.
var listMedia = []string{jsonMedia, csvMedia, xlsxMedia}

// Bounds of a sheet's columns: the names are held while the rows are
// written.
const (
	maxSheetColumns     = 1000
	maxSheetColumnBytes = 256 << 10
)

// sheetColumns are the columns of a list's sheet: id, the resource's
// declared attributes (always, present or not), then every other
// attribute a record of the list has, sorted byte-wise. They are read in
// a first pass over the spooled records, before anything is answered;
// more than the bounds hold → 406.
func sheetColumns(r *resource.Resource, listing *records.Listing) ([]string, error) {
	cols := []string{"id"}
	known := map[string]bool{"id": true}
	for _, a := range r.Attrs {
		if !a.WriteOnly && !known[a.Name] {
			cols = append(cols, a.Name)
			known[a.Name] = true
		}
	}
	var others []string
	size := 0
	tooMany := errs.New(errs.NotAcceptable, "too_many_columns", "the records hold more than "+
		strconv.Itoa(maxSheetColumns)+" distinct attributes (or more than "+strconv.Itoa(maxSheetColumnBytes>>10)+
		" KiB of their names), more than a sheet holds: narrow the list with where or limit, or ask for application/json")
	err := listing.Stored(func(doc []byte) error {
		return jsontext.Members(doc, func(key, _ []byte) error {
			if known[string(key)] {
				return nil
			}
			if size += len(key); len(cols)+len(others) >= maxSheetColumns || size > maxSheetColumnBytes {
				return tooMany
			}
			name := string(key)
			known[name] = true
			others = append(others, name)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(others)
	return append(cols, others...), nil
}

// streamSheet answers a list as a sheet of media (CSV or XLSX). A
// failure before the first byte is out is an error answer; after it, the
// connection is cut, as for JSON lists.
func (s *Server) streamSheet(w http.ResponseWriter, req *http.Request, r *resource.Resource, listing *records.Listing, media string) error {
	cols, err := sheetColumns(r, listing)
	if err != nil {
		return err
	}
	out := &answerWriter{w: w, contentType: media}
	var sw sheet.Writer
	if media == csvMedia {
		out.contentType = csvContentType
		sw = sheet.NewCSV(out)
	} else if sw, err = sheet.NewXLSX(out, r.Name); err != nil {
		return err
	}
	defer sw.Close()
	err = s.writeSheet(req, sw, cols, listing)
	if err == nil {
		return nil
	}
	if !out.started {
		return err
	}
	var we *clientWriteError
	if errors.As(err, &we) {
		s.log.InfoContext(req.Context(), "client stopped reading a list", "request_id", requestID(req.Context()), "err", err)
	} else {
		s.log.ErrorContext(req.Context(), "list failed while streaming", "request_id", requestID(req.Context()), "err", err)
	}
	panic(http.ErrAbortHandler)
}

// writeSheet writes the header row, a row of each record (references
// expanded) and ends the sheet.
func (s *Server) writeSheet(req *http.Request, sw sheet.Writer, cols []string, listing *records.Listing) error {
	index := make(map[string]int, len(cols))
	for i, c := range cols {
		index[c] = i
	}
	if err := sw.Header(cols); err != nil {
		return err
	}
	values := make([][]byte, len(cols))
	err := listing.Each(infoFrom(req.Context()).base, s.cfg.RequestTimeout, func(doc []byte) error {
		clear(values)
		err := jsontext.Members(doc, func(key, value []byte) error {
			if i, ok := index[string(key)]; ok {
				values[i] = value
			}
			return nil
		})
		if err != nil {
			return err
		}
		return sw.Row(values)
	})
	if err != nil {
		return err
	}
	return sw.Flush()
}

// answerWriter is an answer that starts (200, its Content-Type) with the
// first byte written to it, and tells a failure to write apart.
type answerWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

func (a *answerWriter) Write(p []byte) (int, error) {
	if !a.started {
		a.w.Header().Set("Content-Type", a.contentType)
		a.w.WriteHeader(http.StatusOK)
		a.started = true
	}
	n, err := a.w.Write(p)
	if err != nil {
		return n, &clientWriteError{err}
	}
	return n, nil
}
