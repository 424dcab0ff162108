package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/jsontext"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/spool"
	"planwerk/internal/store"
)

// Bounds of a list answer's memory.
const (
	// spoolMemory is how much of a list is held in memory before the rest
	// goes to a temporary file.
	spoolMemory = 256 << 10
	// A populate batch holds at most this many records, or bytes of them.
	batchDocs  = 128
	batchBytes = 2 << 20
	// refBudget bounds the referenced records held for expansion at once.
	refBudget = 8 << 20
)

// Listing is a list answer read from the database: the records a query
// selected, held in a spool so that no connection waits on the client.
type Listing struct {
	s        *Service
	caller   auth.Principal
	r        *resource.Resource
	populate []string
	sp       *spool.Spool
	// stop releases the read's context.
	stop context.CancelFunc
	// next is the cursor of the page after this one ("" for none).
	next string
}

// Query reads the records a query selects into a spool, as fast as the
// database delivers them; the tenant's share of list scans bounds how many
// such reads run at once. Close the listing when done.
func (s *Service) Query(ctx context.Context, caller auth.Principal, r *resource.Resource, q *query.Query) (*Listing, error) {
	if h := s.hooks[r.Name]; h.ReadFilter != nil {
		only, err := h.ReadFilter(ctx, caller, r, q)
		if err != nil {
			return nil, err
		}
		if only != nil {
			restricted := *q
			restricted.Where = &query.And{Terms: []query.Node{only}}
			if q.Where != nil {
				restricted.Where = &query.And{Terms: []query.Node{q.Where, only}}
			}
			q = &restricted
		}
	}
	// Long lists spill to the system's temporary folder (TMPDIR).
	sp := spool.New("", spoolMemory)
	readCtx, stop := context.WithCancel(ctx)
	l := &Listing{s: s, caller: caller, r: r, populate: q.Populate, sp: sp, stop: stop}
	// The list is read completely before the answer starts: whether a
	// next page follows, and where it starts, goes in the answer's head;
	// and a failure of the read is still an error answer. A long list
	// waits in the spool's file, not in memory.
	l.fill(readCtx, q)
	if _, err := sp.Long(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Next is the cursor of the page after this one, or "" when the list
// ended on this page.
func (l *Listing) Next() string { return l.next }

// fill reads the records into the spool.
func (l *Listing) fill(ctx context.Context, q *query.Query) {
	var err error
	defer func() {
		// A panic of the read is the list's error, as any failure of it.
		if p := recover(); p != nil {
			err = fmt.Errorf("list read: panic: %v\n%s", p, debug.Stack())
		}
		l.sp.Finish(err)
	}()
	l.next, err = l.s.db.ListRecords(ctx, l.caller.TenantID, Collection(l.r), q, l.sp.Add)
}

// Close releases the listing's memory and temporary file.
func (l *Listing) Close() error {
	l.stop()
	return l.sp.Close()
}

// Stored calls fn with each record in order as the database gave it,
// references not expanded: a first pass for what expanding leaves as it
// is (a sheet's columns, the records' attribute names). The listing is
// complete in its spool when Query returns, so that Each can read it
// again afterwards.
func (l *Listing) Stored(fn func(doc []byte) error) error {
	r, err := l.sp.Reader()
	if err != nil {
		return err
	}
	for {
		doc, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
}

// Each calls emit with each record in order, references expanded. ctx
// bounds the look-ups of referenced records, each of which gets
// lookupTimeout of its own: a long answer may take longer than one
// request's deadline while the client reads it.
func (l *Listing) Each(ctx context.Context, lookupTimeout time.Duration, emit func(doc []byte) error) error {
	r, err := l.sp.Reader()
	if err != nil {
		return err
	}
	if len(l.populate) == 0 {
		for {
			doc, err := r.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := emit(doc); err != nil {
				return err
			}
		}
	}
	// Expanding is the processor's work; a tenant does at most its share
	// of it at once, however many lists it asks for, and waits for its turn
	// no longer than a look-up may take.
	wait, cancel := withTimeout(ctx, lookupTimeout)
	release, err := l.s.expansions.Acquire(wait)
	cancel()
	if err != nil {
		return err
	}
	defer release()
	p := l.s.newPopulator(l.caller, l.r, l.populate, lookupTimeout)
	var (
		batch [][]byte
		size  int
	)
	for {
		doc, err := r.Next()
		if errors.Is(err, io.EOF) {
			return p.expand(ctx, batch, emit)
		}
		if err != nil {
			return err
		}
		batch = append(batch, bytes.Clone(doc))
		size += len(doc)
		if len(batch) == batchDocs || size >= batchBytes {
			if err := p.expand(ctx, batch, emit); err != nil {
				return err
			}
			batch, size = batch[:0], 0
		}
	}
}

// ref names a referenced record.
type ref struct {
	target string
	id     int64
}

// populator expands references of records in batches, holding at most
// about refBudget bytes of referenced records.
type populator struct {
	s       *Service
	caller  auth.Principal
	r       *resource.Resource
	attrs   []resource.Attr
	timeout time.Duration
	cache   map[ref][]byte // nil value: absent or not visible
	bytes   int
	out     bytes.Buffer
}

func (s *Service) newPopulator(caller auth.Principal, r *resource.Resource, names []string, timeout time.Duration) *populator {
	p := &populator{s: s, caller: caller, r: r, timeout: timeout, cache: map[ref][]byte{}}
	for _, name := range names {
		if a, ok := r.Attr(name); ok && (a.Ref != "" || a.RefByModel != "") {
			p.attrs = append(p.attrs, a)
		}
	}
	return p
}

// parsed is a record split into its top-level members, with the
// references to expand.
type parsed struct {
	keys   []string
	values []json.RawMessage
	refs   map[string]ref // attribute name → referenced record
}

func (p *populator) parse(doc []byte) (parsed, error) {
	var d parsed
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return d, fmt.Errorf("decode record: %w", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return d, fmt.Errorf("decode record: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return d, fmt.Errorf("decode record: %w", err)
		}
		d.keys = append(d.keys, key)
		d.values = append(d.values, v)
	}
	member := func(name string) any {
		for i, k := range d.keys {
			if k == name {
				var x any
				dec := json.NewDecoder(bytes.NewReader(d.values[i]))
				dec.UseNumber()
				_ = dec.Decode(&x)
				return x
			}
		}
		return nil
	}
	for _, a := range p.attrs {
		id, ok := AsID(member(a.Name))
		if !ok {
			continue
		}
		fields := map[string]any{}
		if a.RefByModel != "" {
			fields[a.RefByModel] = member(a.RefByModel)
		}
		target, ok := p.r.RefTarget(a, fields)
		if !ok {
			continue
		}
		if d.refs == nil {
			d.refs = map[string]ref{}
		}
		d.refs[a.Name] = ref{target: target, id: id}
	}
	return d, nil
}

// expand emits each record of batch with its references replaced by the
// referenced records (null when absent or not visible to the caller).
func (p *populator) expand(ctx context.Context, batch [][]byte, emit func([]byte) error) error {
	docs := make([]parsed, len(batch))
	need := map[ref]bool{}
	for i, b := range batch {
		d, err := p.parse(b)
		if err != nil {
			return err
		}
		docs[i] = d
		for _, rf := range d.refs {
			need[rf] = true
		}
	}
	// Keep what this batch needs (often the same few projects or users);
	// forget the rest.
	p.keepOnly(need)
	complete, err := p.fetch(ctx, need, true)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if !complete {
			// The batch refers to more than the budget holds: fetch what
			// each record needs just before it is written.
			one := map[ref]bool{}
			for _, rf := range d.refs {
				one[rf] = true
			}
			if p.bytes > refBudget {
				p.keepOnly(one)
			}
			if _, err := p.fetch(ctx, one, false); err != nil {
				return err
			}
		}
		if err := p.write(d, emit); err != nil {
			return err
		}
	}
	return nil
}

func (p *populator) keepOnly(need map[ref]bool) {
	for rf, doc := range p.cache {
		if !need[rf] {
			p.bytes -= len(doc)
			delete(p.cache, rf)
		}
	}
}

// fetch reads the records of need that are not cached yet. With budget
// set it stops, reporting false, once the cache holds more than refBudget
// bytes.
func (p *populator) fetch(ctx context.Context, need map[ref]bool, budget bool) (complete bool, err error) {
	missing := map[string][]int64{}
	for rf := range need {
		if _, ok := p.cache[rf]; !ok {
			missing[rf.target] = append(missing[rf.target], rf.id)
		}
	}
	for target, ids := range missing {
		tr, ok := p.s.reg.Get(target)
		if !ok {
			continue
		}
		visible := p.s.hooks[target].Visible
		stopped := false
		lookup, cancel := withTimeout(ctx, p.timeout)
		err := p.s.db.EachByID(lookup, p.caller.TenantID, Collection(tr), ids, func(id int64, doc []byte) error {
			keep := bytes.Clone(doc)
			if visible != nil {
				// A record the caller may not read is as absent here as in Get.
				m, err := Decode(doc)
				if err != nil {
					return err
				}
				if ok, err := visible(ctx, p.caller, m.View()); err != nil {
					return err
				} else if !ok {
					keep = nil
				}
			}
			p.cache[ref{target, id}] = keep
			p.bytes += len(keep)
			if budget && p.bytes > refBudget {
				stopped = true
				return store.ErrStop
			}
			return nil
		})
		cancel()
		if err != nil {
			return false, err
		}
		if stopped {
			return false, nil
		}
		for _, id := range ids { // not found: absent
			if _, ok := p.cache[ref{target, id}]; !ok {
				p.cache[ref{target, id}] = nil
			}
		}
	}
	return true, nil
}

// write emits a record with its references replaced.
func (p *populator) write(d parsed, emit func([]byte) error) error {
	p.out.Reset()
	p.out.WriteByte('{')
	for i, key := range d.keys {
		if i > 0 {
			p.out.WriteByte(',')
		}
		k, err := jsontext.Marshal(key)
		if err != nil {
			return fmt.Errorf("encode record: %w", err)
		}
		p.out.Write(k)
		p.out.WriteByte(':')
		rf, ok := d.refs[key]
		switch {
		case !ok:
			p.out.Write(d.values[i])
		case p.cache[rf] == nil:
			p.out.WriteString("null")
		default:
			p.out.Write(p.cache[rf])
		}
	}
	p.out.WriteByte('}')
	return emit(p.out.Bytes())
}

// withTimeout is context.WithTimeout, or ctx as it is when d is 0.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
