//go:build !race

package tokens

// raceEnabled reports whether the race detector is on, which slows
// counting several times over, so the timing test shrinks its inputs.
const raceEnabled = false
