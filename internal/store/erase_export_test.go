package store

import "time"

// ObserveErase makes fn learn how long each batch of EraseTenant held its
// transaction, from its first statement to its commit.
func (db *DB) ObserveErase(fn func(took time.Duration)) { db.observeErase = fn }
