package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zalando/go-keyring"
)

// Service is the keychain service name every Carrier entry lives under.
const Service = "carrier"

// ErrNoKeychain says the OS keychain cannot be used. Carrier then refuses
// to sign in rather than keep tokens in a file.
var ErrNoKeychain = errors.New("no usable OS keychain")

// keychain is the part of go-keyring Carrier uses; tests wrap it to play
// a keychain with Windows' size limit.
type keychain interface {
	Set(service, user, secret string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

// osKeychain calls go-keyring one at a time: several accounts are read
// and written from several goroutines (a sender chosen while uploads
// refresh their tokens), and go-keyring's mock, which the tests of every
// package use, is a map without a lock.
type osKeychain struct{}

var keychainMu sync.Mutex

func (osKeychain) Set(service, user, secret string) error {
	keychainMu.Lock()
	defer keychainMu.Unlock()
	return keyring.Set(service, user, secret)
}

func (osKeychain) Get(service, user string) (string, error) {
	keychainMu.Lock()
	defer keychainMu.Unlock()
	return keyring.Get(service, user)
}

func (osKeychain) Delete(service, user string) error {
	keychainMu.Lock()
	defer keychainMu.Unlock()
	return keyring.Delete(service, user)
}

var store keychain = osKeychain{}

// keychainError wraps a keychain failure with what to install or unlock.
// The underlying error comes from D-Bus or the OS and names no secret.
type keychainError struct {
	op  string
	err error
}

func (e *keychainError) Error() string {
	return fmt.Sprintf("cannot %s in the OS keychain (%v). %s", e.op, e.err, keychainHint())
}

func (e *keychainError) Unwrap() []error { return []error{ErrNoKeychain, e.err} }

func keychainHint() string {
	const never = " Carrier keeps tokens only there, never in a plain file."
	switch runtime.GOOS {
	case "darwin":
		return "Unlock the login keychain (in Keychain Access) and try again." + never
	case "windows":
		return "Check that Windows Credential Manager works for this account and try again." + never
	}
	return "Carrier needs a Secret Service provider on the session D-Bus: install and start GNOME Keyring " +
		"(apt install gnome-keyring libsecret-tools) or enable Secret Service integration in KeePassXC, " +
		"and unlock it. Without a desktop session, run Carrier under `dbus-run-session` with " +
		"`gnome-keyring-daemon --unlock --components=secrets` started in it." + never
}

// entry is one account's keychain secret: what refreshing needs, plus the
// access token when it fits. Names are short because Windows allows 2560
// bytes and macOS about 3000 for the whole item.
type entry struct {
	V            int       `json:"v"`
	Account      string    `json:"acct"`
	Endpoint     string    `json:"ep"`
	ClientID     string    `json:"cid"`
	ClientSecret string    `json:"cs,omitempty"`
	TokenURL     string    `json:"tu"`
	RevokeURL    string    `json:"ru,omitempty"`
	Scope        string    `json:"sc,omitempty"` // space-separated, as OAuth sends it
	Refresh      string    `json:"rt"`
	Access       string    `json:"at,omitempty"`
	Expiry       time.Time `json:"exp,omitzero"`
}

// index is the per-endpoint list of accounts: go-keyring cannot list
// entries. The first account is the one used by default. It holds no
// secret but lives in the keychain so Carrier writes no file for sign-in.
type index struct {
	Accounts []string `json:"accounts"`
}

func accountKey(host, address string) string { return address + "@" + host }

// An index key is the bare host: an account key always has "@host" after
// a non-empty address, and a host has no "@", so the two cannot collide.
func indexKey(host string) string { return host }

func readIndex(host string) (index, error) {
	var ix index
	s, err := store.Get(Service, indexKey(host))
	if errors.Is(err, keyring.ErrNotFound) {
		return ix, nil
	}
	if err != nil {
		return ix, &keychainError{op: "read the list of signed-in accounts", err: err}
	}
	if err := json.Unmarshal([]byte(s), &ix); err != nil {
		return ix, fmt.Errorf("the keychain's list of accounts for %s is damaged (%v): remove the entry %q of service %q with your keychain tool, then sign in again", host, err, indexKey(host), Service)
	}
	return ix, nil
}

func writeIndex(host string, ix index) error {
	if len(ix.Accounts) == 0 {
		err := store.Delete(Service, indexKey(host))
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return &keychainError{op: "update the list of signed-in accounts", err: err}
		}
		return nil
	}
	data, _ := json.Marshal(ix)
	if err := store.Set(Service, indexKey(host), string(data)); err != nil {
		return &keychainError{op: "update the list of signed-in accounts", err: err}
	}
	return nil
}

// clientKey names the entry of the OAuth client an endpoint's accounts
// signed in with, kept when an account signs out (keepClient). A host has
// no space, so it cannot collide with an index or an account key.
func clientKey(host string) string { return "client " + host }

// keepClient keeps e's client (its id, its secret, its OAuth addresses;
// no token, no address), so that signing in again after the last account
// signed out does not make the person choose the client file again. A
// desktop client's secret is not confidential (Google says an installed
// app cannot keep one), but it stays in the keychain with the sign-ins.
func keepClient(host string, e *entry) error {
	c := entry{V: e.V, Endpoint: e.Endpoint, ClientID: e.ClientID, ClientSecret: e.ClientSecret, TokenURL: e.TokenURL, RevokeURL: e.RevokeURL}
	data, _ := json.Marshal(&c)
	if err := store.Set(Service, clientKey(host), string(data)); err != nil {
		return &keychainError{op: "keep the sign-in's client", err: err}
	}
	return nil
}

// readClient is the client kept for host, nil when none is.
func readClient(host string) (*entry, error) {
	s, err := store.Get(Service, clientKey(host))
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, &keychainError{op: "read the sign-in's client", err: err}
	}
	var e entry
	if err := json.Unmarshal([]byte(s), &e); err != nil || e.ClientID == "" || e.TokenURL == "" {
		return nil, nil // damaged: the person gives the file again
	}
	return &e, nil
}

func (ix index) withFirst(address string) index {
	rest := slices.DeleteFunc(slices.Clone(ix.Accounts), func(a string) bool { return a == address })
	return index{Accounts: append([]string{address}, rest...)}
}

func (ix index) without(address string) index {
	return index{Accounts: slices.DeleteFunc(slices.Clone(ix.Accounts), func(a string) bool { return a == address })}
}

func readEntry(host, address string) (*entry, error) {
	s, err := store.Get(Service, accountKey(host, address))
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s is not signed in at %s; sign in first", ErrNotSignedIn, address, host)
	}
	if err != nil {
		return nil, &keychainError{op: "read the sign-in of " + address, err: err}
	}
	var e entry
	if err := json.Unmarshal([]byte(s), &e); err != nil || e.Refresh == "" || e.TokenURL == "" {
		return nil, fmt.Errorf("%w: the keychain entry of %s at %s is damaged; sign out and sign in again", ErrNotSignedIn, address, host)
	}
	return &e, nil
}

// writeEntry stores e, leaving the access token out when the keychain
// finds the entry too big: the refresh token alone is enough to get one.
// It reports whether the access token was kept.
func writeEntry(host string, e *entry) (keptAccess bool, err error) {
	key := accountKey(host, e.Account)
	full, _ := json.Marshal(e)
	err = store.Set(Service, key, string(full))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, keyring.ErrSetDataTooBig) {
		return false, &keychainError{op: "save the sign-in of " + e.Account, err: err}
	}
	small := *e
	small.Access, small.Expiry = "", time.Time{}
	reduced, _ := json.Marshal(&small)
	if err := store.Set(Service, key, string(reduced)); err != nil {
		if errors.Is(err, keyring.ErrSetDataTooBig) {
			return false, fmt.Errorf("the keychain refuses the sign-in of %s as too big (%d bytes even without the access token): %w", e.Account, len(reduced), err)
		}
		return false, &keychainError{op: "save the sign-in of " + e.Account, err: err}
	}
	return false, nil
}

func deleteEntry(host, address string) error {
	err := store.Delete(Service, accountKey(host, address))
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return &keychainError{op: "remove the sign-in of " + address, err: err}
	}
	return nil
}

// probeKeychain fails early, before a person goes through consent, when
// the keychain cannot be used.
func probeKeychain(host string) error {
	_, err := readIndex(host)
	return err
}

func splitScope(s string) []string { return strings.Fields(s) }
