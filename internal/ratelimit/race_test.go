//go:build race

package ratelimit_test

// raceEnabled: the race detector slows map-heavy loops about sixfold.
const raceEnabled = true
