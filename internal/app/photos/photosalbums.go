package photos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"carrier/internal/gapi"
)

// An album is found or made before the batch is queued, not by a job of
// it: albums.create is not idempotent, and a call sent again after its
// answer was lost would leave an empty second album of the same title.
// So Carrier lists the albums it made (all an app may list since March
// 2025) and adds to one of the title asked for; only when there is none
// does it create one, and after a create whose answer did not come back
// it lists again before sending another. The album's id is then written
// into the batch's batchCreate calls, which the journal keeps: a kill -9
// before they are recorded leaves at most the album, which the next run
// of the same batch finds by its title.

// PhotosAlbum is an album Carrier made in Google Photos.
type PhotosAlbum struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	ProductURL string `json:"productUrl"`
	Items      int64  `json:"-"`
	Count      string `json:"mediaItemsCount"`
}

// call makes one request of the Photos Library API with a JSON body if
// given and reads the JSON answer into v.
func (p Photos) call(ctx context.Context, method, path string, body []byte, v any) error {
	if p.sent != nil {
		p.sent.Add(1)
	}
	c := &gapi.Client{Root: strings.TrimRight(p.Root, "/"), Auth: p.Drive.Auth, HTTP: p.Drive.Client, Service: "Google Photos"}
	return c.Do(ctx, gapi.Call{Method: method, Path: path, Body: body}, v)
}

// Albums lists the albums Carrier made, newest first, every page of them.
func (p Photos) Albums(ctx context.Context) ([]PhotosAlbum, error) {
	var out []PhotosAlbum
	token := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			return nil, errors.New("Google Photos keeps answering with more pages of albums")
		}
		q := url.Values{"pageSize": {"50"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		var page struct {
			Albums        []PhotosAlbum `json:"albums"`
			NextPageToken string        `json:"nextPageToken"`
		}
		if err := p.call(ctx, http.MethodGet, "/v1/albums?"+q.Encode(), nil, &page); err != nil {
			return nil, fmt.Errorf("cannot list Carrier's albums in Google Photos: %w", err)
		}
		for _, a := range page.Albums {
			a.Items, _ = strconv.ParseInt(a.Count, 10, 64)
			out = append(out, a)
		}
		if page.NextPageToken == "" || page.NextPageToken == token {
			return out, nil
		}
		token = page.NextPageToken
	}
}

// albumTitled is the album Carrier made of exactly that title, if any
// (the newest, should there be several).
func (p Photos) albumTitled(ctx context.Context, title string) (PhotosAlbum, bool, error) {
	all, err := p.Albums(ctx)
	if err != nil {
		return PhotosAlbum{}, false, err
	}
	for _, a := range all {
		if a.Title == title {
			return a, true, nil
		}
	}
	return PhotosAlbum{}, false, nil
}

// photosAlbumTries is how many creates are sent, each after a list that
// found no album of the title, before giving up.
const photosAlbumTries = 3

// Album returns the album Carrier made of the title, making it when there
// is none; made reports whether this call made it. A create refused by
// Photos (a 4xx) is not sent again; one whose answer is lost or a 5xx is,
// after a list that shows it did not land after all.
func (p Photos) Album(ctx context.Context, title string) (a PhotosAlbum, made bool, err error) {
	return p.album(ctx, title, false)
}

// album is Album; listed says the albums were listed just now and held
// none of the title, so the first create goes without listing again.
func (p Photos) album(ctx context.Context, title string, listed bool) (a PhotosAlbum, made bool, err error) {
	body, _ := json.Marshal(map[string]any{"album": map[string]string{"title": title}})
	var last error
	for try := 0; try < photosAlbumTries; try++ {
		if try > 0 || !listed {
			a, ok, err := p.albumTitled(ctx, title)
			if err != nil {
				return a, false, err
			}
			if ok {
				return a, false, nil
			}
		}
		if ctx.Err() != nil {
			return a, false, context.Cause(ctx)
		}
		err = p.call(ctx, http.MethodPost, "/v1/albums", body, &a)
		var refused *gapi.Error
		switch {
		case err == nil && a.ID != "":
			return a, true, nil
		case err == nil:
			last = errors.New("Google Photos made the album but did not say its id")
		case errors.As(err, &refused) && refused.Code < 500:
			// Refused (a 4xx): nothing was made, so it is not asked again.
			return a, false, fmt.Errorf("cannot make the album %q in Google Photos: %w", title, err)
		default:
			last = err
		}
	}
	return PhotosAlbum{}, false, fmt.Errorf("cannot make the album %q in Google Photos: %w", title, last)
}
