//go:build (darwin && !cgo) || freebsd || netbsd || openbsd || dragonfly

package platform

import (
	"context"
	"errors"
)

// watchSleep: IOKit's notifications need cgo (macOS), and the BSDs have
// no common service to ask; the engine's clock comparison notices a wake.
func watchSleep(context.Context, func(Signal)) error {
	return errors.New("sleep is not reported here")
}
