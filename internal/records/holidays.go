package records

import (
	"context"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// PublicHoliday is the name of the absence type that every tenant has and
// that marks public holidays.
const PublicHoliday = "PublicHoliday"

// publicHolidayType returns the id of the tenant's PublicHoliday absence type.
func (s *Service) publicHolidayType(ctx context.Context, q store.Querier, tenantID int64) (int64, bool, error) {
	types, _ := s.reg.Get("absence-types")
	recs, err := s.db.FindRecords(ctx, q, tenantID, Collection(types),
		&query.Cond{Field: query.Field{Name: "name"}, Op: query.Eq, Values: []query.Value{{Kind: query.KindString, Str: PublicHoliday}}}, 1)
	if err != nil || len(recs) == 0 {
		return 0, false, err
	}
	return recs[0].ID, true, nil
}

// holidaysFilter: holidays are the absences of the PublicHoliday type.
func (s *Service) holidaysFilter(ctx context.Context, caller auth.Principal, r *resource.Resource, _ *query.Query) (query.Node, error) {
	id, ok, err := s.publicHolidayType(ctx, nil, caller.TenantID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &query.Or{}, nil // matches nothing
	}
	return &query.Cond{Field: r.Schema().Fields["absenceType"], Op: query.Eq, Values: []query.Value{intValue(id)}}, nil
}

func (s *Service) holidayVisible(ctx context.Context, caller auth.Principal, doc map[string]any) (bool, error) {
	id, ok, err := s.publicHolidayType(ctx, nil, caller.TenantID)
	if err != nil || !ok {
		return false, err
	}
	t, _ := asID(doc["absenceType"])
	return t == id, nil
}

// checkAbsenceType keeps the PublicHoliday type unique and named.
func (s *Service) checkAbsenceType(ctx context.Context, w *Write) error {
	name, _ := w.New["name"].(string)
	if w.Old != nil && w.Old["name"] == PublicHoliday {
		if name != PublicHoliday {
			return problem("name", "the PublicHoliday absence type keeps its name")
		}
		return nil
	}
	if name == PublicHoliday {
		if _, exists, err := s.publicHolidayType(ctx, w.Tx, w.Caller.TenantID); err != nil || exists {
			if err != nil {
				return err
			}
			return conflict("the tenant already has the PublicHoliday absence type")
		}
	}
	return nil
}

func checkAbsenceTypeDelete(_ context.Context, w *Write) error {
	if w.Old["name"] == PublicHoliday {
		return conflict("the PublicHoliday absence type cannot be deleted")
	}
	return nil
}
