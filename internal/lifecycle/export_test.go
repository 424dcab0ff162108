package lifecycle

import "slices"

// CatalogProblems compares the catalog with a live schema: live maps
// each table of the database to its columns. It reports every table with
// tenant rows (a tenant_id column, or tenants itself) the archive neither
// exports nor skips, every column of an exported table it neither carries
// nor leaves out with a reason, and every column it names that the table
// does not have.
func CatalogProblems(engine string, live map[string][]string) []string {
	exported := map[string]table{tenantTable.name: tenantTable}
	for _, t := range tables {
		exported[t.name] = t
	}
	var problems []string
	for _, name := range sortedKeys(live) {
		cols := live[name]
		tableName := name
		if name == "tenants" {
			tableName = tenantTable.name
		} else if !slices.Contains(cols, "tenant_id") {
			continue
		}
		if s, ok := skippedTables[name]; ok {
			if s.engine != "" && s.engine != engine {
				problems = append(problems, "table "+name+" is skipped as a table of "+s.engine+" alone, but "+engine+" has it")
			}
			continue
		}
		t, ok := exported[tableName]
		if !ok {
			problems = append(problems, "table "+name+" holds tenant rows, but the archive neither exports nor skips it (internal/lifecycle/catalog.go)")
			continue
		}
		for _, c := range cols {
			if c != "tenant_id" && !hasColumn(t.columns, c) && t.skipped[c] == "" {
				problems = append(problems, "column "+name+"."+c+" is neither in the archive nor skipped with a reason")
			}
		}
		for _, c := range t.columns {
			if !slices.Contains(cols, c.name) {
				problems = append(problems, "the archive's column "+name+"."+c.name+" is not in the table")
			}
		}
	}
	for name := range exported {
		if _, ok := live[name]; !ok && name != tenantTable.name {
			problems = append(problems, "the archive's table "+name+" is not in the database")
		}
	}
	return problems
}
