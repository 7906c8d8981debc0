// Package auth signs a person in with Google's loopback OAuth flow (PKCE),
// keeps the tokens in the OS keychain and hands out a TokenSource that saves
// refreshed tokens.
package auth
