package mailbox

import (
	"context"
	"testing"

	"carrier/internal/app"
)

// testSandbox is the embedded sandbox, as the desktop app starts it, in a
// folder of the test's.
func testSandbox(t *testing.T) *app.Embedded {
	t.Helper()
	e, err := app.StartEmbedded(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
