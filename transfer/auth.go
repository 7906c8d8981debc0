package transfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Authorizer puts credentials on API requests. Refresh is called once when
// the server answers 401, before the request is tried again.
type Authorizer interface {
	Authorize(ctx context.Context, req *http.Request) error
	Refresh(ctx context.Context) error
}

// ErrCannotRefresh is what an Authorizer says when it has no way to get a
// new token; the job then fails asking the person for one.
var ErrCannotRefresh = errors.New("this token cannot be refreshed: get a new one (sign in again) and retry")

// StaticToken is a fixed bearer token, as given to `carrier upload --token`.
type StaticToken string

func (t StaticToken) Authorize(_ context.Context, req *http.Request) error {
	if t != "" {
		req.Header.Set("Authorization", "Bearer "+string(t))
	}
	return nil
}

func (StaticToken) Refresh(context.Context) error { return ErrCannotRefresh }

// TokenFunc adapts a token source (such as auth's keychain-backed one) to
// Authorizer: it is called with refresh=false for every request and with
// refresh=true after a 401.
type TokenFunc func(ctx context.Context, refresh bool) (string, error)

func (f TokenFunc) Authorize(ctx context.Context, req *http.Request) error {
	tok, err := f(ctx, false)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

func (f TokenFunc) Refresh(ctx context.Context) error {
	_, err := f(ctx, true)
	return err
}

// ErrSignInNeeded is what an Authorizer wraps when the sign-in behind its
// credentials is dead: the token endpoint answered invalid_grant (revoked,
// expired, a password changed), or no credential is stored at all. Only a
// person signing in again mends it, so a job that meets it is parked in
// StateSignIn, its session and offset kept and no retry spent, until
// Queue.SignedIn says the account is back.
var ErrSignInNeeded = errors.New("a sign-in is needed")

// SignInError names the account whose sign-in ended, so a front end can
// say whom to sign in as. Its error wraps ErrSignInNeeded.
type SignInError struct {
	Account string // an address, or whatever names the sign-in to people
	Err     error  // what the credential's source said; never a token
}

func (e *SignInError) Error() string {
	if e.Account == "" && e.Err != nil {
		return fmt.Sprintf("%v: %v", ErrSignInNeeded, e.Err)
	}
	if e.Err == nil {
		return fmt.Sprintf("%v (%s)", ErrSignInNeeded, e.Account)
	}
	return fmt.Sprintf("%v (%s): %v", ErrSignInNeeded, e.Account, e.Err)
}

func (e *SignInError) Unwrap() []error { return []error{ErrSignInNeeded, e.Err} }

// A RefusalJudge is an Authorizer that can tell, of a refusal that ends
// an upload, whether only a new sign-in mends it: the credential is valid
// but was not granted what the request needs, so trying again with it
// fails the same way. It returns a *SignInError for such a refusal (the
// job then waits in StateSignIn, as for a sign-in that ended, and the next
// sign-in of its account sends it on) and nil for any other. job is the
// job's URL, ctx carries its account (AccountOf).
type RefusalJudge interface {
	SignInNeeded(ctx context.Context, job string, refused *APIError) error
}

// accountNeeded is the account err names, "" when it names none.
func accountNeeded(err error) string {
	if se := (*SignInError)(nil); errors.As(err, &se) {
		return se.Account
	}
	return ""
}

type accountKey struct{}

// AccountOf is the account (Spec.Account) of the job a request belongs
// to, for an Authorizer that holds several sign-ins; "" is the default
// account of the request's server.
func AccountOf(ctx context.Context) string {
	s, _ := ctx.Value(accountKey{}).(string)
	return s
}

func withAccount(ctx context.Context, account string) context.Context {
	if account == "" {
		return ctx
	}
	return context.WithValue(ctx, accountKey{}, account)
}

// WithAccount is ctx for requests made as account outside a job (a front
// end's own calls before it queues the job), read back by AccountOf.
func WithAccount(ctx context.Context, account string) context.Context {
	return withAccount(ctx, account)
}
