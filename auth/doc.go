// Package auth signs a person in with Google's loopback OAuth flow (PKCE),
// keeps the tokens in the OS keychain and hands out a TokenSource that saves
// refreshed tokens.
//
// # Signing in
//
// A Config names the API endpoint and the OAuth client: GoogleConfig reads
// the person's own client file ("Desktop app" JSON from the Google Cloud
// Console), SandboxConfig points at a sandbox's /o/oauth2/v2/auth and /token
// with its fixed public client. Login asks for the scopes of the work at
// hand (ScopesFor(Send), ScopesFor(Timeline), ...), opens the browser (or
// prints the address), waits on 127.0.0.1 for the answer, checks state,
// exchanges the code with its PKCE verifier, reads the account's address and
// saves the sign-in. A wrong state, a denied consent, a timeout or any later
// failure leaves the keychain as it was.
//
// # The keychain
//
// Entries live under service "carrier". Each account has one, with user
// "ADDRESS@HOST" (HOST is the endpoint's host[:port]; every *.googleapis.com
// host counts as www.googleapis.com), holding what a refresh needs (client,
// token URL, refresh token, scopes) and the access token when it fits: on
// keyring.ErrSetDataTooBig (Windows allows 2560 bytes) the access token is
// left out. An entry with user "HOST" lists the accounts signed in there,
// the default first. Nothing is ever written to a plain file; without a
// usable keychain the error wraps ErrNoKeychain and says what to install.
//
// # For the upload engine
//
//	acct, err := auth.Load(endpoint) // the default account; ErrNotSignedIn if none
//	ts := acct.TokenSource(ctx)      // an oauth2.TokenSource; refreshes and saves
//	tok, err := ts.Refresh(ctx)      // after a 401: a new token even if the old looks valid
//	cfg.Auth = transfer.TokenFunc(acct.Bearer) // the same, as the engine's Authorizer
//
// A refresh the server refuses (revoked, expired grant) fails with
// ErrNotSignedIn: the person must sign in again. Account.Can tells whether
// the grant covers a kind of work; if not, sign in again with the union of
// Account.Scopes and ScopesFor(kind).
package auth
