package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/internal/gapi"
)

// A draft's large files are uploaded when it is saved, so its links are
// real, but shared with nobody: a draft is not sent yet, and may never
// be, or to other people. The shares are made when the draft is sent
// (`carrier send --send-draft ID`): the draft is read back, each Drive
// file it links to that Carrier made is shared with the draft's
// recipients as they stand then, and the draft goes. Sent from Gmail's
// own web client instead, Gmail's access checker sees the links to files
// its recipients cannot open and offers to share them; sent from any
// other client, a recipient gets Drive's "You need access" page, whose
// request goes to the sender.

// Sends reports whether the upload sends its message: only then are its
// Drive files shared. A draft saved or updated, a message inserted or
// imported into the sender's own mailbox, reaches nobody.
func (u Upload) Sends() bool {
	return u.Path == routeSend.path || u.Path == routeDraftSend.path
}

// ShareLinked shares the Drive files the message raw links to, and that
// this app may see (the ones Carrier made; others are the sender's own
// business and left alone), as share says: with the message's
// recipients, reader, no notification (Gmail's mail is the notice),
// ending after expiry if given; or with anyone with the link. It returns
// the names of the files shared. A share made again is the same share,
// so a send tried again after a failure shares nothing twice.
func (d Drive) ShareLinked(ctx context.Context, raw []byte, share message.Share, expiry time.Duration, now func() time.Time) ([]string, error) {
	ids, err := message.LinkedFiles(raw)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	var who []string
	if share != message.ShareAnyone {
		if who, err = message.Recipients(raw); err != nil {
			return nil, err
		}
	}
	return d.shareFiles(ctx, ids, who, share, expiry, now)
}

// ShareLinkedIn is ShareLinked for a message about to be sent as a
// draft's new content: the links its text or HTML already holds (saved
// in the draft before, shared with nobody), shared with its recipients.
// Links to files Carrier did not make are left alone.
func (d Drive) ShareLinkedIn(ctx context.Context, msg *compose.Message, share message.Share, expiry time.Duration) ([]string, error) {
	ids := message.LinkedIn(msg)
	if len(ids) == 0 {
		return nil, nil
	}
	return d.shareFiles(ctx, ids, recipients(msg), share, expiry, nil)
}

// shareFiles shares the Drive files ids this app may see with who (or
// anyone), as ShareLinked says.
func (d Drive) shareFiles(ctx context.Context, ids, who []string, share message.Share, expiry time.Duration, now func() time.Time) ([]string, error) {
	if expiry < 0 || expiry > MaxLinkExpiry {
		return nil, fmt.Errorf("a link's expiry is at most a year (Google Drive's limit), not %s", expiry)
	}
	if expiry > 0 && share == message.ShareAnyone {
		return nil, errors.New("an expiry applies to recipients' access only: Google Drive does not let a link for anyone expire")
	}
	if now == nil {
		now = time.Now
	}
	var grants []map[string]string
	if share == message.ShareAnyone {
		grants = append(grants, map[string]string{"type": "anyone", "role": "reader"})
	} else {
		if len(who) == 0 {
			return nil, errors.New("the draft has no recipients to share its Drive files with")
		}
		for _, addr := range who {
			g := map[string]string{"type": "user", "role": "reader", "emailAddress": addr}
			if expiry > 0 {
				g["expirationTime"] = now().Add(expiry).UTC().Format(time.RFC3339)
			}
			grants = append(grants, g)
		}
	}
	var names []string
	for _, id := range ids {
		var f struct{ Name string }
		err := d.get(ctx, "/drive/v3/files/"+url.PathEscape(id)+"?fields=id,name", &f)
		if gapi.StatusOf(err) == http.StatusNotFound { // no such file, or not one this app may see (drive.file sees only the files Carrier made)
			continue
		}
		if err != nil {
			return names, err
		}
		for _, g := range grants {
			body, _ := json.Marshal(g)
			var p struct{ ID string }
			if err := d.do(ctx, http.MethodPost, "/drive/v3/files/"+url.PathEscape(id)+"/permissions?sendNotificationEmail=false&fields=id", body, &p); err != nil {
				return names, fmt.Errorf("cannot share %s with %s: %w", Printable(f.Name), orAnyone(g["emailAddress"]), err)
			}
		}
		names = append(names, f.Name)
	}
	return names, nil
}
