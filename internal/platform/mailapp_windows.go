package platform

import (
	"errors"
	"fmt"

	"golang.org/x/sys/windows/registry"
)

// mailClient is Carrier's name under Clients\Mail, as the .msi registers
// it (scripts/windows/carrier.wxs).
const mailClient = "Carrier"

// The machine's mail clients (the .msi's) and the person's choice among
// them; a test points them at scratch keys.
var (
	mailMachineRoot = registry.LOCAL_MACHINE
	mailMachineKey  = `Software\Clients\Mail`
	mailUserKey     = `Software\Clients\Mail`
)

func canMakeMailApp() bool { return true }

// makeMailApp makes Carrier the person's mail client (HKCU's
// Clients\Mail, which Simple MAPI looks at before the machine's): every
// program's "Send by email" goes to Carrier's DLL. Before is the person's
// choice before, else the machine's.
func makeMailApp(string) (MailApp, error) {
	k, err := registry.OpenKey(mailMachineRoot, mailMachineKey+`\`+mailClient, registry.QUERY_VALUE)
	if err != nil {
		return MailApp{}, fmt.Errorf("Carrier is not registered as a mail client on this computer (its installer, Carrier.msi, does that): %w", err)
	}
	k.Close()
	before, err := defaultValue(registry.CURRENT_USER, mailUserKey)
	if err != nil {
		return MailApp{}, err
	}
	if before == "" {
		if before, err = defaultValue(mailMachineRoot, mailMachineKey); err != nil {
			return MailApp{}, err
		}
	}
	if before == mailClient {
		return MailApp{Before: before, Already: true, LinksInSettings: true}, nil
	}
	u, _, err := registry.CreateKey(registry.CURRENT_USER, mailUserKey, registry.SET_VALUE)
	if err != nil {
		return MailApp{}, fmt.Errorf("making Carrier your mail app: %w", err)
	}
	defer u.Close()
	if err := u.SetStringValue("", mailClient); err != nil {
		return MailApp{}, fmt.Errorf("making Carrier your mail app: %w", err)
	}
	return MailApp{Before: before, LinksInSettings: true}, nil
}

// defaultValue is a key's unnamed value, "" when the key or value is
// missing.
func defaultValue(root registry.Key, path string) (string, error) {
	k, err := registry.OpenKey(root, path, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer k.Close()
	v, _, err := k.GetStringValue("")
	if errors.Is(err, registry.ErrNotExist) {
		return "", nil
	}
	return v, err
}
