package resource

import "planwerk/internal/query"

// Shorthands for the table below.
func ref(name, target, doc string) Attr {
	return Attr{Name: name, Type: query.Integer, Ref: target, Doc: doc}
}

func open(name, model, doc string) Resource {
	return Resource{Name: name, Model: model, Doc: doc}
}

var (
	trackingTypes    = []string{"WORK", "WORKTIME", "BREAK"}
	validationStatus = []string{"NOTAPPROVED", "APPROVED"}
	documentModels   = []string{"user", "project", "client"}
)

// all is the registry: every resource of the API.
func all() []Resource {
	return []Resource{
		{Name: "absences", Model: "Absence", Doc: "An absence of a user; absences of type PublicHoliday are public holidays.",
			Attrs: []Attr{ref("absenceType", "absence-types", "the AbsenceType")}},
		{Name: "absence-requests", Model: "AbsenceRequest", Doc: "A user's request for an absence.", Write: OwnRecords,
			Attrs: []Attr{ref("user", "users", "the requesting user; defaults to the caller")}},
		open("absence-types", "AbsenceType", "A kind of absence; PublicHoliday marks public holidays."),
		open("clients", "Client", "A client."),
		open("client-external-integrations", "ClientExternalIntegration", "A client's link to an external system."),
		open("contacts", "Contact", "A contact person."),
		open("colors", "Color", "A color."),
		{Name: "documents", Model: "Document", Doc: "A file with metadata, attached to a user, project or client.",
			Attrs: []Attr{
				{Name: "model", Type: query.Enum, Enum: documentModels, Required: true, Doc: "the parent kind: user, project or client"},
				{Name: "record", Type: query.Integer, RefByModel: "model", Required: true, Doc: "the id of the parent record"},
				{Name: "category", Type: query.Integer, Ints: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, Doc: "category, scoped to model (1-6 user, 7-10 project, 11-14 client)"},
				{Name: "visibleToUser", Type: query.Boolean, Doc: "for model user: whether the employee sees the document"},
				{Name: "name", Type: query.String, Doc: "display name"},
				{Name: "date", Type: query.Date, Doc: "the document's date, YYYY-MM-DD"},
			}},
		{Name: "expenses", Model: "Expense", Doc: "A cost booked against a project; carries at most one file.", Write: OwnRecords,
			Attrs: []Attr{ref("user", "users", "the user who booked the expense; defaults to the caller")}},
		open("expense-categories", "ExpenseCategory", "A category of expenses."),
		{Name: "holidays", Model: "Holiday", Doc: "Deprecated: public holidays, derived from absences of type PublicHoliday.",
			ReadOnly: true, Deprecated: true, Source: "absences",
			Attrs: []Attr{ref("absenceType", "absence-types", "the PublicHoliday AbsenceType")}},
		open("integration-services", "IntegrationService", "A configured integration."),
		open("integration-service-types", "IntegrationServiceType", "A kind of integration."),
		open("invoices", "Invoice", "An invoice."),
		open("invoice-external-integrations", "InvoiceExternalIntegration", "An invoice's link to an external system."),
		open("planned-invoices", "PlannedInvoice", "A planned invoice."),
		open("overtime-reductions", "OvertimeReduction", "A reduction of overtime."),
		open("planner-assignments", "PlannerAssignment", "A planned assignment of a user to a project."),
		open("projects", "Project", "A project."),
		{Name: "project-days", Model: "ProjectDay", Doc: "Approval state of one project on one day (read-only; see /v1/approval/bulk-approve).",
			ReadOnly: true, DeclaredOnly: true, NoContains: true,
			Attrs: []Attr{
				{Name: "day", Type: query.Date, Required: true, Doc: "calendar day, YYYY-MM-DD"},
				ref("project", "projects", "the project"),
				{Name: "validationStatus", Type: query.Enum, Enum: validationStatus, Doc: "NOTAPPROVED or APPROVED"},
			}},
		open("project-milestones", "ProjectMilestone", "A milestone of a project."),
		open("references", "Reference", "A reference."),
		open("reference-families", "ReferenceFamily", "A family of references."),
		open("reference-family-assignments", "ReferenceFamilyAssignment", "A reference's membership in a family."),
		open("roles", "Role", "A role."),
		{Name: "tasks", Model: "Task", Doc: "A task of a project.",
			Attrs: []Attr{ref("project", "projects", "the project the task belongs to; WORK time entries naming the task must be of it")}},
		open("task-assignments", "TaskAssignment", "A user's assignment to a task."),
		open("teams", "Team", "A team."),
		open("team-assignments", "TeamAssignment", "A user's membership in a team."),
		{Name: "skill-assignments", Model: "SkillAssignment", Doc: "A skill held by a user; deleting archives it (status 0).",
			Attrs: []Attr{
				{Name: "user", Type: query.Integer, Ref: "users", Required: true, Doc: "the user"},
				{Name: "tag", Type: query.Integer, Ref: "tags", Required: true, Doc: "the skill (a Tag with a type)"},
				{Name: "proficiency", Type: query.Integer, Ints: []int64{1, 2, 3, 4, 5}, Doc: "proficiency level, 1 (basic) to 5 (expert)"},
				{Name: "status", Type: query.Integer, Ints: []int64{0, 1}, Doc: "1 active, 0 archived"},
			}},
		{Name: "skill-sets", Model: "SkillSet", Doc: "A named collection of skills, for applying them to users at once.",
			Attrs: []Attr{{Name: "category", Type: query.Integer, Ref: "skill-set-categories", Required: true, Doc: "the SkillSetCategory"}}},
		open("skill-set-categories", "SkillSetCategory", "Groups skill sets."),
		{Name: "tags", Model: "Tag", Doc: "A plain tag (type null) or a skill (1 skill, 2 language, 3 certificate).",
			Params: []string{"includeSkills"},
			Attrs: []Attr{
				{Name: "type", Type: query.Integer, Ints: []int64{1, 2, 3}, Doc: "null: plain tag; 1 skill, 2 language, 3 certificate"},
				ref("category", "tag-categories", "the TagCategory of a skill"),
			}},
		{Name: "tag-assignments", Model: "TagAssignment", Doc: "Attaches a tag to a record (model, record).",
			Attrs: []Attr{
				{Name: "tag", Type: query.Integer, Ref: "tags", Required: true, Doc: "the tag"},
				{Name: "model", Type: query.Enum, Enum: ModelNames(), Required: true, Doc: "the kind of the tagged record"},
				{Name: "record", Type: query.Integer, RefByModel: "model", Required: true, Doc: "the id of the tagged record"},
			}},
		open("tag-categories", "TagCategory", "Categorises skills."),
		{Name: "time-entries", Model: "TimeEntry", Doc: "Project time (WORK), clock in/out (WORKTIME) or a break (BREAK).", Write: OwnRecords,
			Attrs: []Attr{
				ref("user", "users", "the user; defaults to the caller"),
				{Name: "trackingType", Type: query.Enum, Enum: trackingTypes, Doc: "WORK, WORKTIME or BREAK"},
				ref("project", "projects", "the project (WORK only)"),
				ref("task", "tasks", "the task (WORK only)"),
				{Name: "day", Type: query.Date, Required: true, Doc: "the day, YYYY-MM-DD"},
				{Name: "duration", Type: query.Integer, Doc: "whole seconds, 0 to 31622400 (366 days)"},
				{Name: "sorting", Type: query.Integer, Doc: "position within the day"},
				{Name: "startTime", Type: query.Timestamp, Doc: "YYYY-MM-DDTHH:mm:ss.sssZ"},
				{Name: "endTime", Type: query.Timestamp, Doc: "YYYY-MM-DDTHH:mm:ss.sssZ"},
				{Name: "validationStatus", Type: query.Enum, Enum: validationStatus, ReadOnly: true, Doc: "APPROVED when the entry's project day is approved"},
			}},
		{Name: "users", Model: "User", Doc: "A person of the tenant.", Table: "users",
			Attrs: []Attr{
				{Name: "email", Type: query.String, Doc: "sign-in e-mail address, unique in the tenant ignoring case"},
				{Name: "password", Type: query.String, WriteOnly: true, Doc: "sign-in password (write-only, not empty)"},
				{Name: "isAdmin", Type: query.Boolean, Doc: "admins may write everything in the tenant"},
			}},
		open("user-assignments", "UserAssignment", "A user's assignment."),
		open("user-employments", "UserEmployment", "A user's employment period."),
		open("user-integrations", "UserIntegration", "A user's link to an external system."),
		open("vacation-budgets", "VacationBudget", "A user's vacation budget."),
	}
}
