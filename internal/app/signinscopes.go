package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"carrier/auth"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A sign-in grants some kinds of work (auth.Kind); a job needs one, read
// off the URL it goes to: the same API route the server checks a token's
// scopes against. Signing an account in again asks for every kind its
// unfinished jobs need (NeededKinds), Drive's too, and a job refused for
// a kind its sign-in lacks waits for a sign-in (SignInNeeded) rather than
// fail.

// KindOf is the kind of work a job going to jobURL needs, "" when the URL
// names no API Carrier knows (a Cloud Storage bucket, another server):
// read off the route table (delivery.RouteOf), by the route's kind.
func KindOf(jobURL string) auth.Kind {
	k := delivery.RouteOf(jobURL).Kind
	switch {
	case k == delivery.RouteSend.Kind:
		return auth.Send
	case k == delivery.RouteDraftSend.Kind, k == delivery.RouteDraftUpdate.Kind, k == delivery.RouteDraft.Kind:
		return auth.Drafts
	case k == delivery.RouteImport.Kind, k == delivery.RouteInsert.Kind:
		return auth.Insert
	case k == delivery.RouteTimeline.Kind, k == delivery.RouteAttach.Kind:
		return auth.Timeline
	case k == delivery.KindDriveUpload, k == delivery.KindDriveShare:
		return auth.Links
	case delivery.Route{Kind: k}.Photos():
		return auth.Photos
	}
	return ""
}

// NeededKinds are the kinds of work account's unfinished jobs in q need
// (queued, waiting, paused, parked or failed), in auth.Kinds' order.
func NeededKinds(q *Queue, account string) []auth.Kind {
	if q == nil || account == "" {
		return nil
	}
	var kinds []auth.Kind
	for _, s := range AccountJobs(q, account) {
		if k := KindOf(s.URL); k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(a, b auth.Kind) int { return slices.Index(auth.Kinds, a) - slices.Index(auth.Kinds, b) })
	return kinds
}

// AlsoAsked are the kinds a sign-in of account asks for beyond the
// window's own (sending and drafts) because a job of account waits for
// them: what the window tells the person before the browser opens.
func AlsoAsked(q *Queue, account string) []auth.Kind {
	return slices.DeleteFunc(NeededKinds(q, account), func(k auth.Kind) bool { return slices.Contains(windowKinds, k) })
}

// scopeRefused reports whether a refusal is Google's for a token that
// lacks the scope the request needs: 403 with the reason
// ACCESS_TOKEN_SCOPE_INSUFFICIENT (its ErrorInfo) or the words "insufficient
// authentication scopes" (its message, the same in every API). Google's
// insufficientPermissions alone is not enough: Drive says it as well of a
// file the account may not change, which no sign-in mends.
func scopeRefused(e *transfer.APIError) bool {
	if e.Code != http.StatusForbidden {
		return false
	}
	return slices.Contains(e.Reasons, "ACCESS_TOKEN_SCOPE_INSUFFICIENT") ||
		strings.Contains(strings.ToLower(e.Message), "insufficient authentication scopes")
}

// SignInNeeded is c's transfer.RefusalJudge: a job refused because its
// sign-in was not granted the scope the request needs waits, parked, for
// its account to sign in again (which asks for what the job needs:
// NeededKinds), rather than fail with a Retry that would be refused the
// same way.
func (c *Credentials) SignInNeeded(ctx context.Context, job string, refused *transfer.APIError) error {
	if !scopeRefused(refused) {
		return nil
	}
	account := transfer.AccountOf(ctx)
	who := account
	if who == "" {
		who = "the account signed in"
	}
	what := "do this"
	if k := KindOf(job); k != "" {
		what = string(k)
	}
	return &transfer.SignInError{Account: account, Err: fmt.Errorf("%s did not allow Carrier to %s (%w)", who, what, refused)}
}
