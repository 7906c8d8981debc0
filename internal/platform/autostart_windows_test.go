package platform

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// The Run value names the executable quoted, with the flag, and goes
// again when turned off. A scratch key stands in for the real Run key.
func TestAutostartRunKey(t *testing.T) {
	old := runKey
	runKey = fmt.Sprintf(`Software\CarrierTest\Run%d`, os.Getpid())
	t.Cleanup(func() {
		registry.DeleteKey(registry.CURRENT_USER, runKey)
		registry.DeleteKey(registry.CURRENT_USER, `Software\CarrierTest`)
		runKey = old
	})
	exe := `C:\Program Files\Carrier\Carrier.exe`
	if err := SetAutostart(true, exe); err != nil {
		t.Fatal(err)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := k.GetStringValue("Carrier")
	k.Close()
	if err != nil || v != `"`+exe+`" --autostart` {
		t.Fatalf("Run value %q, %v", v, err)
	}
	if on, err := Autostart(); !on || err != nil {
		t.Fatalf("written, but Autostart says %v, %v", on, err)
	}
	if err := SetAutostart(false, ""); err != nil {
		t.Fatal(err)
	}
	if on, err := Autostart(); on || err != nil {
		t.Fatalf("turned off: %v, %v", on, err)
	}
	if err := SetAutostart(false, ""); err != nil {
		t.Fatalf("turning off twice: %v", err)
	}
	if err := SetAutostart(true, "Carrier.exe"); err == nil {
		t.Fatal("a relative path was written")
	}
}
