//go:build !race

package lexical

// growthLimit is how many times longer the growth tests let four times
// the input take: linear, with room for the noise of a shared machine.
const growthLimit = 5

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
