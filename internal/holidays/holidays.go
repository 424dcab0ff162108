// Package holidays holds the rules of public holidays (docs/api.md
// "Absences and holidays"): every tenant has one absence type named PublicHoliday,
// which keeps its name and cannot be deleted; the deprecated holidays
// resource shows the absences of that type.
package holidays

import (
	"context"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// PublicHoliday is the name of the absence type that every tenant has and
// that marks public holidays.
const PublicHoliday = "PublicHoliday"

// Store is what the rules need of the database.
type Store interface {
	Records(q store.Querier, tenantID int64, c store.Collection) store.Records
}

// Service applies the rules.
type Service struct {
	db    Store
	types *resource.Resource
}

// New returns a Service.
func New(db Store, reg *resource.Registry) *Service {
	return &Service{db: db, types: reg.Must("absence-types")}
}

// Ensure gives a new tenant its PublicHoliday absence type, inside the
// transaction that creates the tenant. (Tenants older than the type got
// theirs from the migration 00008_public_holiday.)
func (s *Service) Ensure(ctx context.Context, tx store.Querier, tenantID int64) error {
	_, exists, err := s.typeID(ctx, tx, tenantID)
	if err != nil || exists {
		return err
	}
	_, err = s.db.Records(tx, tenantID, records.Collection(s.types)).Insert(ctx, map[string]any{"name": PublicHoliday})
	return err
}

// typeID returns the id of the tenant's PublicHoliday absence type.
func (s *Service) typeID(ctx context.Context, tx store.Querier, tenantID int64) (int64, bool, error) {
	recs, err := s.db.Records(tx, tenantID, records.Collection(s.types)).Find(ctx,
		query.Equal(query.Field{Name: "name"}, query.Str(PublicHoliday)), 1)
	if err != nil || len(recs) == 0 {
		return 0, false, err
	}
	return recs[0].ID, true, nil
}

// FilterHolidays (ReadFilter): holidays are the absences of the
// PublicHoliday type.
func (s *Service) FilterHolidays(ctx context.Context, caller auth.Principal, r *resource.Resource, _ *query.Query) (query.Node, error) {
	id, ok, err := s.typeID(ctx, nil, caller.TenantID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &query.Or{}, nil // matches nothing
	}
	return query.Equal(r.Schema().Fields["absenceType"], query.Int(id)), nil
}

// VisibleHoliday (Visible) is FilterHolidays for one record.
func (s *Service) VisibleHoliday(ctx context.Context, caller auth.Principal, doc records.DocView) (bool, error) {
	id, ok, err := s.typeID(ctx, nil, caller.TenantID)
	if err != nil || !ok {
		return false, err
	}
	t, _ := doc.Ref("absenceType")
	return t == id, nil
}

// CheckAbsenceType (Check) keeps the PublicHoliday type unique and named.
func (s *Service) CheckAbsenceType(ctx context.Context, c records.Change) error {
	name, _ := c.New.String("name")
	if was, _ := c.Old.String("name"); was == PublicHoliday {
		if name != PublicHoliday {
			return errs.Field("name", "the PublicHoliday absence type keeps its name")
		}
		return nil
	}
	if name != PublicHoliday {
		return nil
	}
	_, exists, err := s.typeID(ctx, c.Tx, c.Caller.TenantID)
	if err != nil {
		return err
	}
	if exists {
		return errs.Conflicts("the tenant already has the PublicHoliday absence type")
	}
	return nil
}

// CheckAbsenceTypeDelete (CheckDelete) keeps the PublicHoliday type.
func CheckAbsenceTypeDelete(_ context.Context, c records.Change) error {
	if name, _ := c.Old.String("name"); name == PublicHoliday {
		return errs.Conflicts("the PublicHoliday absence type cannot be deleted")
	}
	return nil
}
