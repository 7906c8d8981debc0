package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"carrier/internal/app/message"
	"carrier/internal/gapi"
)

// gmail makes one JSON request of Gmail at d.Root (the same API root and
// authorizer as Drive's) and reads the answer into v, if given.
func (d Drive) gmail(ctx context.Context, method, path string, body []byte, v any) error {
	return d.api("Gmail").Do(ctx, gapi.Call{Method: method, Path: path, Body: body}, v)
}

// ReadDraft is draft id's message as it stands, raw (RFC 822).
func (d Drive) ReadDraft(ctx context.Context, id string) ([]byte, error) {
	var draft struct {
		Message struct {
			Raw string `json:"raw"`
		} `json:"message"`
	}
	if err := d.gmail(ctx, http.MethodGet, "/gmail/v1/users/me/drafts/"+url.PathEscape(id)+"?format=raw", nil, &draft); err != nil {
		return nil, fmt.Errorf("cannot read the draft: %w", err)
	}
	raw, err := base64.URLEncoding.DecodeString(draft.Message.Raw)
	if err != nil {
		raw, err = base64.RawURLEncoding.DecodeString(draft.Message.Raw)
	}
	if err != nil {
		return nil, fmt.Errorf("the draft came back unreadable: %w", err)
	}
	return raw, nil
}

// SendDraft sends draft id as it stands (drafts.send, nothing uploaded):
// the Drive files its links name, uploaded unshared when it was saved,
// are shared first (ShareLinked, as share and expiry say), so no
// recipient meets a locked file. It returns the names of the files shared.
func (d Drive) SendDraft(ctx context.Context, id string, share message.Share, expiry time.Duration) ([]string, error) {
	raw, err := d.ReadDraft(ctx, id)
	if err != nil {
		return nil, err
	}
	names, err := d.ShareLinked(ctx, raw, share, expiry, nil)
	if err != nil {
		return names, fmt.Errorf("the draft was not sent: %w", err)
	}
	body, _ := json.Marshal(map[string]string{"id": id})
	if err := d.gmail(ctx, http.MethodPost, "/gmail/v1/users/me/drafts/send", body, nil); err != nil {
		return names, fmt.Errorf("the draft was not sent: %w", err)
	}
	return names, nil
}
