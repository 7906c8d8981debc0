package transfer

import (
	"context"
	"errors"
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
