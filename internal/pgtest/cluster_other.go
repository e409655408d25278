//go:build !linux

package pgtest

import (
	"context"
	"fmt"
	"runtime"
)

// start refuses: without Linux's parent-death signal a killed test run
// would leave its server running.
func (c *Cluster) start(context.Context, string) error {
	return fmt.Errorf("%w: throwaway clusters need Linux's parent-death signal, and this is %s", ErrUnavailable, runtime.GOOS)
}

// alive reports every process as alive: no cluster starts here, so none
// is left behind by a dead one, and sweepDead keeps whatever it finds.
func alive(int) bool { return true }
