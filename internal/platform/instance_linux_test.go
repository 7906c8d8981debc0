package platform

import (
	"testing"

	"carrier/internal/dbustest"
)

// instanceTestSetup gives the test a session bus of its own.
func instanceTestSetup(t *testing.T) { dbustest.SessionBus(t) }
