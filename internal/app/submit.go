package app

import (
	"context"
	"fmt"

	"carrier/auth"
	"carrier/compose"
	"carrier/transfer"
)

// The rules a message a person gives goes through before anything is
// queued, the same for the window's Compose and `carrier send`: written
// once here, so the front ends cannot drift apart.

// EditDraft is what Gmail is asked for a message edited from the draft id
// ("" for none): sending it (Send) sends the draft with the message as it
// stands now (drafts.send); any other method updates the draft
// (drafts.update). Either way it stays one draft.
func EditDraft(id string, method compose.Method) GmailOptions {
	switch {
	case id == "":
		return GmailOptions{}
	case method == compose.Send:
		return GmailOptions{SendDraft: id}
	default:
		return GmailOptions{DraftID: id}
	}
}

// DraftMethod is the method a message goes by: one that updates a draft
// (o.DraftID) or sends one (o.SendDraft) is a draft's, whatever else was
// asked, so its limits and what is kept of it are a draft's.
func DraftMethod(method compose.Method, o GmailOptions) compose.Method {
	if o.DraftID != "" || o.SendDraft != "" {
		return compose.Draft
	}
	return method
}

// Prepare checks a message before anything is written (every problem of
// its fields, compose.Message.Check) and says the method it goes by
// (DraftMethod).
func Prepare(msg *compose.Message, method compose.Method, o GmailOptions) (compose.Method, error) {
	if err := msg.Check(); err != nil {
		return method, err
	}
	return DraftMethod(method, o), nil
}

// MayDrive is the Drive permission check made before anything is queued:
// work that puts n files in Drive (a message's links, a draft's links
// shared as it is sent, media kept in Drive) asks may whether the account
// allows Carrier Drive (auth.Links), and the error may gives (a
// *NotAllowedError when the person must allow it first) is returned as it
// is. Nothing is asked when no file goes there, nor when nobody can say
// (may nil).
func MayDrive(ctx context.Context, n int, may func(context.Context, auth.Kind) error) error {
	if n == 0 || may == nil {
		return nil
	}
	return may(ctx, auth.Links)
}

// LinksNotAllowed is Submit's refusal of a message some of whose files
// go as Google Drive links (Linked) while the account does not allow
// Carrier Drive: nothing is queued. Err is what the permission check said
// (a *NotAllowedError when the person can allow it, through
// errors.As).
type LinksNotAllowed struct {
	Linked []string
	Err    error
}

func (e *LinksNotAllowed) Error() string {
	return fmt.Sprintf("%d of the files go as Google Drive links: %v", len(e.Linked), e.Err)
}

func (e *LinksNotAllowed) Unwrap() error { return e.Err }

// Submit queues a message a person gave, by method with gmail's options,
// the same way for the window's Compose and `carrier send`: its fields
// checked and its method said (Prepare); its recipe (Message); when some
// of its files go as Drive links (opts.Policy, Threshold, Choose), the
// account's permission asked of opts.May (MayDrive), refused as a
// *LinksNotAllowed; when it sends a draft (gmail.SendDraft), the Drive
// files its text already links to (put there when the draft was saved,
// shared with nobody) shared as opts says (Drive.ShareLinkedIn); then
// its large files as Drive links and the message last (SendWithLinks,
// with settings). It returns the recipe and the jobs, the message's
// last. Nothing is queued when a check or a share fails: the draft is
// not sent with links its recipients cannot open.
func (q *Queue) Submit(ctx context.Context, d Drive, msg *compose.Message, method compose.Method, gmail GmailOptions, opts LinkOptions, settings func(*transfer.Spec)) (Upload, []string, error) {
	method, err := Prepare(msg, method, gmail)
	if err != nil {
		return Upload{}, nil, err
	}
	up, err := Message(msg, method, gmail)
	if err != nil {
		return up, nil, err
	}
	ids, err := q.SubmitRecipe(ctx, d, msg, method, up, gmail, opts, settings)
	return up, ids, err
}

// SubmitRecipe is Submit for a message whose fields were checked and
// whose recipe was made (Prepare, then Message, by method): `carrier
// send` reads the upload's settings from the recipe before it queues,
// and makes it once.
func (q *Queue) SubmitRecipe(ctx context.Context, d Drive, msg *compose.Message, method compose.Method, up Upload, gmail GmailOptions, opts LinkOptions, settings func(*transfer.Spec)) ([]string, error) {
	if _, linked := compose.PlanLinks(msg, method, opts.Policy, opts.Threshold, opts.Choose); len(linked) > 0 {
		if err := MayDrive(ctx, len(linked), opts.May); err != nil {
			return nil, &LinksNotAllowed{Linked: linked, Err: err}
		}
	}
	if gmail.SendDraft != "" {
		if _, err := d.ShareLinkedIn(ctx, msg, opts.Share, opts.Expiry); err != nil {
			return nil, err
		}
	}
	return q.SendWithLinks(ctx, d, msg, method, up, opts, settings)
}
