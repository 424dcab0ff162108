package records

import (
	"context"
	"errors"
	"fmt"
	"net/mail"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// DefaultHooks returns the special rules of Planwerk's resources.
func DefaultHooks(db *store.DB, hasher *auth.Hasher, tokens *auth.Service) map[string]Hooks {
	u := userRules{db: db, hasher: hasher, tokens: tokens}
	return map[string]Hooks{
		"users":     {Prepare: u.prepare, Check: u.check, Insert: u.insert, Update: u.update, Delete: u.delete},
		"documents": {Check: checkDocument, Visible: documentVisible, ReadFilter: documentFilter},
	}
}

// userRules keep a user's sign-in credentials beside the user record.
type userRules struct {
	db     *store.DB
	hasher *auth.Hasher
	tokens *auth.Service
}

func (u userRules) prepare(ctx context.Context, w *Write) error {
	pw, ok := w.WriteOnly["password"].(string)
	if !ok {
		return nil
	}
	if pw == "" {
		return invalid([]resource.Problem{{Field: "password", Message: "must not be empty"}})
	}
	hash, err := u.hasher.Hash(ctx, pw)
	if err != nil {
		return err
	}
	w.Prepared["passwordHash"] = hash
	return nil
}

func (u userRules) check(_ context.Context, w *Write) error {
	if email, ok := w.New["email"].(string); ok {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
			return invalid([]resource.Problem{{Field: "email", Message: "must be an e-mail address"}})
		}
	}
	if _, ok := w.WriteOnly["password"]; ok && w.Prepared["passwordHash"] == nil {
		return invalid([]resource.Problem{{Field: "password", Message: "must be a string"}})
	}
	if w.New["isAdmin"] == nil {
		w.New["isAdmin"] = false
	}
	return nil
}

func conflictOnEmail(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return &Error{Kind: Conflict, Code: "conflict", Message: "a user with this e-mail address exists",
			Problems: []resource.Problem{{Field: "email", Message: "is taken"}}}
	}
	return err
}

func (u userRules) insert(ctx context.Context, w *Write) (store.Doc, error) {
	email, _ := w.New["email"].(string)
	hash, _ := w.Prepared["passwordHash"].(string)
	isAdmin, _ := w.New["isAdmin"].(bool)
	attrs := make(map[string]any, len(w.New))
	for k, v := range w.New {
		if k != "email" && k != "isAdmin" {
			attrs[k] = v
		}
	}
	user, err := u.db.CreateUser(ctx, w.Tx, w.Caller.TenantID, store.NewUser{Email: email, PasswordHash: hash, IsAdmin: isAdmin, Attrs: attrs})
	if err != nil {
		return nil, conflictOnEmail(err)
	}
	return user.Doc, nil
}

func (u userRules) update(ctx context.Context, w *Write) (store.Doc, error) {
	var hash *string
	if h, ok := w.Prepared["passwordHash"].(string); ok {
		hash = &h
		// A new password ends every session of the user.
		if err := u.db.RevokeUserTokens(ctx, w.Tx, w.Caller.TenantID, w.ID); err != nil {
			return nil, err
		}
	}
	doc, err := u.db.UpdateUser(ctx, w.Tx, w.Caller.TenantID, w.ID, w.CreatedAt, w.New, hash)
	if err != nil {
		return nil, conflictOnEmail(err)
	}
	if hash != nil || w.Old["isAdmin"] != w.New["isAdmin"] {
		w.AfterCommit(u.tokens.ForgetCachedTokens)
	}
	return doc, nil
}

func (u userRules) delete(ctx context.Context, w *Write) (store.Doc, error) {
	if w.ID == w.Caller.UserID {
		return nil, &Error{Kind: Conflict, Code: "conflict", Message: "you cannot delete your own user"}
	}
	if err := u.db.DeleteUser(ctx, w.Tx, w.Caller.TenantID, w.ID); err != nil {
		if errors.Is(err, store.ErrOwner) {
			return nil, &Error{Kind: Conflict, Code: "conflict", Message: "the tenant's first user cannot be deleted"}
		}
		return nil, err
	}
	w.AfterCommit(u.tokens.ForgetCachedTokens)
	return nil, nil
}

// checkDocument: a Document's category must belong to its model.
func checkDocument(_ context.Context, w *Write) error {
	cat, ok := asID(w.New["category"])
	if !ok {
		return nil
	}
	model, _ := w.New["model"].(string)
	if want := resource.DocumentCategories[cat]; want != model {
		return invalid([]resource.Problem{{Field: "category",
			Message: fmt.Sprintf("%d is for %s documents, not %s documents", cat, want, model)}})
	}
	return nil
}

// documentVisible: members see a user-model Document only when it is
// about themselves and visibleToUser is true (CONTRACT.md "Roles").
func documentVisible(_ context.Context, caller auth.Principal, doc map[string]any) (bool, error) {
	if caller.IsAdmin || doc["model"] != "user" {
		return true, nil
	}
	record, _ := asID(doc["record"])
	return record == caller.UserID && doc["visibleToUser"] == true, nil
}

// documentFilter is documentVisible as list criteria.
func documentFilter(_ context.Context, caller auth.Principal, r *resource.Resource, _ *query.Query) (query.Node, error) {
	if caller.IsAdmin {
		return nil, nil
	}
	f := r.Schema().Fields
	return &query.Or{Terms: []query.Node{
		&query.Cond{Field: f["model"], Op: query.Ne, Values: []query.Value{{Kind: query.KindString, Str: "user"}}},
		&query.And{Terms: []query.Node{
			&query.Cond{Field: f["record"], Op: query.Eq, Values: []query.Value{{Kind: query.KindNumber, Int: caller.UserID, Num: float64(caller.UserID), IsInt: true}}},
			&query.Cond{Field: f["visibleToUser"], Op: query.Eq, Values: []query.Value{{Kind: query.KindBool, Bool: true}}},
		}},
	}}, nil
}
