//go:build system

package store_test

import (
	"testing"

	"planwerk/internal/testenv"
)

// TestCitusTimeTotalsMigration: step 00032 on Citus (PLANWERK_TEST_CITUS,
// README: Running on Citus) computes every tenant's time totals from the
// entries stored before it, as on one PostgreSQL server: it finds the
// tenants over every shard, then rebuilds each tenant's totals in its
// shard, all in the step's transaction.
func TestCitusTimeTotalsMigration(t *testing.T) {
	timeTotalsMigration(t, testenv.CitusDSN(t))
}
