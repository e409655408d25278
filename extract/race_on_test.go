//go:build race

package extract_test

// raceEnabled reports whether the race detector is on: it slows every
// memory access several times over, so the growth test shrinks its
// inputs and allows more room.
const raceEnabled = true
