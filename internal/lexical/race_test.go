//go:build race

package lexical

// growthLimit is how many times longer the growth tests let four times
// the input take. The race detector's bookkeeping grows with the memory a
// test touches, so it gets more room; a quadratic cost would still take
// 16 times as long.
const growthLimit = 8

// raceEnabled reports whether the race detector is on.
const raceEnabled = true
