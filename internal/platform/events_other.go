//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package platform

import "context"

// Elsewhere the engine's clock comparison notices a wake, and failures
// tell of the network.
func watch(context.Context, func(Signal)) error { return ErrNoSignals }
