package photos

import (
	"encoding/json"
	"fmt"
	"strings"

	"carrier/internal/app"
	"carrier/transfer"
)

// batchCreateAnswer is what Photos says of each item of a call.
type batchCreateAnswer struct {
	Results []struct {
		UploadToken string `json:"uploadToken"`
		Status      struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		MediaItem *struct {
			ID         string `json:"id"`
			ProductURL string `json:"productUrl"`
			Filename   string `json:"filename"`
		} `json:"mediaItem"`
	} `json:"newMediaItemResults"`
}

// PhotosResult is where one file of a batch stands.
type PhotosResult struct {
	Path       string
	State      transfer.State // of the step it is at
	Step       string         // "upload", "create", "album"
	ID         string         // the media item's, once made
	ProductURL string
	Error      string            // why it is not in Photos, in Photos' or the engine's words
	Cause      error             // the engine's named cause of a failed step, if any
	Failure    *transfer.Failure // the failed step's failure in parts, nil when none
}

// answersAtOnce is how many calls' answers PhotosResults reads from the
// journal at a time (a variable for tests).
var answersAtOnce = 64

// PhotosResults reads from the journal where each file of the batch
// stands, in the files' order: its media item, or the step it waits at,
// or why it failed (the item's own status when Photos refused it).
func (q *Queue) PhotosResults(b *PhotosBatch) ([]PhotosResult, error) {
	v, err := q.callsView()
	if err != nil {
		return nil, err
	}
	out := make([]PhotosResult, len(b.Uploads))
	index := make(map[string]int, len(b.Uploads)) // a file's path to its place
	for i, u := range b.Uploads {
		s := v.snap(u)
		index[s.Path] = i
		out[i] = PhotosResult{Path: s.Path, State: s.State, Step: "upload", Error: s.Error, Cause: s.Cause}
	}
	var album *transfer.Snapshot
	if b.Album != "" {
		if a, ok := v.look(b.Album); ok {
			album = &a
		}
	}
	// The calls in order, each followed by the calls that made again what
	// it could not (photosAgain): a later word on a file stands.
	var calls []*transfer.Snapshot
	var walk func(id string)
	walk = func(id string) {
		s, ok := v.byID[id]
		if !ok {
			return
		}
		calls = append(calls, s)
		for _, r := range v.againOf(s) {
			walk(r.ID)
		}
	}
	for _, c := range b.Creates {
		walk(c)
	}
	// The answers the journal holds, read answersAtOnce calls at a time:
	// those of calls archived by another Carrier's start are in the
	// archive, which is then read once for as many, not once per call;
	// and a camera roll's 400 answers (about 5 MB) are not held at once
	// beside its results (issue 29).
	var kept map[string]*transfer.Response
	for i, c := range calls {
		if i%answersAtOnce == 0 {
			var inJournal []string
			for _, c := range calls[i:min(i+answersAtOnce, len(calls))] {
				if c.State == transfer.StateDone && c.Response != nil && c.AnswerInJournal {
					inJournal = append(inJournal, c.ID)
				}
			}
			kept = nil
			if len(inJournal) > 0 {
				kept, _ = q.Queue.Answers(inJournal) // one not read is a file whose item is not known yet
			}
		}
		uploads := quotedUploads(*c)
		var ans batchCreateAnswer
		switch {
		case c.State != transfer.StateDone || c.Response == nil:
		case c.AnswerInJournal:
			if r := kept[c.ID]; r != nil {
				json.Unmarshal(r.Body, &ans)
			}
		default:
			json.Unmarshal(c.Response.Body, &ans)
		}
		for k, u := range uploads {
			up := v.snap(u)
			i, ok := index[up.Path]
			if !ok {
				continue
			}
			r := &out[i]
			if up.State != transfer.StateDone {
				r.State, r.Step, r.Error, r.Cause, r.Failure = up.State, "upload", up.Error, up.Cause, up.Failure
				continue
			}
			switch {
			case c.State == transfer.StateDone && k < len(ans.Results):
				res := ans.Results[k]
				r.State, r.Step, r.Cause = transfer.StateDone, "create", nil
				if res.Status.Code == 0 && res.MediaItem != nil {
					r.ID, r.ProductURL, r.Error = res.MediaItem.ID, res.MediaItem.ProductURL, ""
				} else {
					r.State = transfer.StateFailed
					r.Error = fmt.Sprintf("Google Photos did not create the item (status %d): %s", res.Status.Code, app.Printable(res.Status.Message))
				}
			case album != nil && album.State != transfer.StateDone:
				r.State, r.Step, r.Error, r.Cause, r.Failure = album.State, "album", album.Error, album.Cause, album.Failure
			default:
				r.State, r.Step, r.Error, r.Cause, r.Failure = c.State, "create", c.Error, c.Cause, c.Failure
			}
		}
	}
	return out, nil
}

// quotedUploads are the uploads a batchCreate call names, in its items'
// order (the album's id, quoted as "ID.id", is not one).
func quotedUploads(s transfer.Snapshot) []string {
	var out []string
	for _, q := range s.Quote {
		if !strings.Contains(q, ".") {
			out = append(out, q)
		}
	}
	return out
}
