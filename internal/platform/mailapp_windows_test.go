package platform

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// scratchMailKeys points the machine's and the person's Clients\Mail at
// scratch keys (both under HKCU, which a test may write), the machine's
// default other-mail, and Carrier registered there when registered.
func scratchMailKeys(t *testing.T, registered bool) {
	t.Helper()
	base := fmt.Sprintf(`Software\CarrierTest-%d`, os.Getpid())
	machine, user := base+`\Machine\Clients\Mail`, base+`\User\Clients\Mail`
	saved := []string{mailMachineKey, mailUserKey}
	savedRoot := mailMachineRoot
	mailMachineRoot, mailMachineKey, mailUserKey = registry.CURRENT_USER, machine, user
	t.Cleanup(func() {
		mailMachineRoot, mailMachineKey, mailUserKey = savedRoot, saved[0], saved[1]
		for _, k := range []string{machine + `\Carrier`, machine, base + `\Machine\Clients`, base + `\Machine`, user, base + `\User\Clients`, base + `\User`, base} {
			registry.DeleteKey(registry.CURRENT_USER, k)
		}
	})
	k, _, err := registry.CreateKey(registry.CURRENT_USER, machine, registry.SET_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.SetStringValue("", "Other Mail"); err != nil {
		t.Fatal(err)
	}
	if registered {
		c, _, err := registry.CreateKey(registry.CURRENT_USER, machine+`\Carrier`, registry.SET_VALUE)
		if err != nil {
			t.Fatal(err)
		}
		c.SetStringValue("DLLPath", `C:\Program Files\Carrier\carriermapi.dll`)
		c.Close()
	}
}

// Make Carrier my mail app on Windows: the person's Clients\Mail names
// Carrier (the machine's is left alone), the answer names the machine's
// mail client before and says mail links are chosen in Settings; asked
// again, nothing changes and it says so.
func TestMakeMailAppSetsThePersonsMailClient(t *testing.T) {
	scratchMailKeys(t, true)
	got, err := MakeMailApp("app.carrier.desktop")
	if err != nil {
		t.Fatal(err)
	}
	if got != (MailApp{Before: "Other Mail", LinksInSettings: true}) {
		t.Errorf("MakeMailApp said %+v", got)
	}
	if v, err := defaultValue(registry.CURRENT_USER, mailUserKey); err != nil || v != "Carrier" {
		t.Errorf("the person's mail client is %q (%v), want Carrier", v, err)
	}
	if v, _ := defaultValue(mailMachineRoot, mailMachineKey); v != "Other Mail" {
		t.Errorf("the machine's mail client became %q", v)
	}
	if again, err := MakeMailApp("app.carrier.desktop"); err != nil || !again.Already {
		t.Errorf("asked again: %+v, %v; want Already", again, err)
	}
}

// Without the .msi's registration there is no DLL for "Send by email" to
// reach: refused in words, nothing changed.
func TestMakeMailAppNeedsTheInstallersRegistration(t *testing.T) {
	scratchMailKeys(t, false)
	_, err := MakeMailApp("app.carrier.desktop")
	if err == nil || !strings.Contains(err.Error(), "not registered as a mail client") {
		t.Fatalf("MakeMailApp without Carrier registered: %v", err)
	}
	if v, _ := defaultValue(registry.CURRENT_USER, mailUserKey); v != "" {
		t.Errorf("the person's mail client became %q", v)
	}
}
