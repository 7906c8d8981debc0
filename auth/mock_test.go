//go:build !keyring

package auth

// realKeyring is true when the tests run against the OS keychain (-tags
// keyring); go-keyring's mock, once installed, cannot be taken back out.
const realKeyring = false
