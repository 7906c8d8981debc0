package cli

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"carrier/transfer"
)

// hostAuth authorizes each request with the credential of its host: the
// journal may hold jobs for the embedded sandbox, another sandbox and
// Google at once, and `carrier resume` finishes them all.
type hostAuth struct {
	mu   sync.Mutex
	ctx  context.Context
	by   map[string]transfer.Authorizer // origin -> credential; nil: none found
	used map[string]bool
}

// NewHostAuth is the Authorizer the desktop app's queue uses.
func NewHostAuth(ctx context.Context) transfer.Authorizer { return newHostAuth(ctx) }

// ResetAuth makes an Authorizer from NewHostAuth look credentials up
// again, after a sign-in or sign-out.
func ResetAuth(a transfer.Authorizer) {
	if h, ok := a.(*hostAuth); ok {
		h.mu.Lock()
		h.by, h.used = map[string]transfer.Authorizer{}, map[string]bool{}
		h.mu.Unlock()
	}
}

func newHostAuth(ctx context.Context) *hostAuth {
	return &hostAuth{ctx: ctx, by: map[string]transfer.Authorizer{}, used: map[string]bool{}}
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func (h *hostAuth) lookup(o string) transfer.Authorizer {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.by[o]; ok {
		h.used[o] = a != nil
		return a
	}
	var a transfer.Authorizer
	sandboxToken := embeddedTokenFor(o)
	if acct, err := accountAuth(h.ctx, o, "", sandboxToken != ""); err == nil && acct != nil {
		a = acct
	} else if sandboxToken != "" {
		a = transfer.StaticToken(sandboxToken)
	}
	h.by[o] = a
	h.used[o] = a != nil
	return a
}

// errNoCredentials reaches the engine as a failure of the request that
// needed one; session URIs need none and go out as they are.
var errNoCredentials = errors.New("no credentials for this server: run `carrier login --endpoint URL`, or pass a token in CARRIER_TOKEN")

func (h *hostAuth) Authorize(ctx context.Context, req *http.Request) error {
	if a := h.lookup(origin(req.URL)); a != nil {
		return a.Authorize(ctx, req)
	}
	if req.URL.Query().Has("upload_id") {
		return nil
	}
	return errNoCredentials
}

// Refresh refreshes every credential in use: the engine does not say for
// which host, and a token refreshed early costs nothing.
func (h *hostAuth) Refresh(ctx context.Context) error {
	h.mu.Lock()
	var as []transfer.Authorizer
	for o, used := range h.used {
		if used {
			as = append(as, h.by[o])
		}
	}
	h.mu.Unlock()
	var errs []error
	refreshed := false
	for _, a := range as {
		if err := a.Refresh(ctx); err != nil {
			errs = append(errs, err)
		} else {
			refreshed = true
		}
	}
	if refreshed {
		return nil
	}
	if len(errs) == 0 {
		return transfer.ErrCannotRefresh
	}
	return errors.Join(errs...)
}
