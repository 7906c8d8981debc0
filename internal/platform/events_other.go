//go:build !linux && !windows

package platform

import "context"

// Elsewhere (macOS: IOKit's sleep notifications need cgo, which every
// package but main does without) the engine's clock comparison notices a
// wake.
func watch(context.Context, func(Signal)) error { return ErrNoSignals }
