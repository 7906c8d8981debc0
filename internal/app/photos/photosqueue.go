package photos

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path/filepath"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// The jobs of a batch: each file's upload, and the batchCreate calls
// that make their items (photos.go).

// addPhotosUpload queues one file's upload in Photos' resumable dialect,
// after the job after if given (the batch's call before its own).
func (q *Queue) addPhotosUpload(root, path, mimeType string, st *postedStamp, after string, settings func(*transfer.Spec)) (string, error) {
	return q.addPhotosUploadTo(root+"/v1/uploads", path, mimeType, st, after, settings)
}

// addPhotosUploadTo is addPhotosUpload to the uploads' URL (root's
// /v1/uploads), one string for a whole batch.
func (q *Queue) addPhotosUploadTo(url, path, mimeType string, st *postedStamp, after string, settings func(*transfer.Spec)) (string, error) {
	s := transfer.Spec{URL: url, Method: http.MethodPost, Protocol: transfer.ProtocolGoogUpload,
		ContentType: mimeType, Path: path, Label: filepath.Base(path) + " · to Google Photos"}
	if settings != nil {
		settings(&s)
	}
	s.Type, s.Metadata, s.Checksums, s.Existing, s.Needs = transfer.Resumable, nil, nil, "", nil
	if after != "" {
		s.Needs = []string{after}
	}
	id, err := q.Add(s)
	if err == nil && st != nil {
		// The file's SHA-256, read when it was matched against what was
		// posted before, is kept for the item it becomes: the engine
		// keeps a CRC32C of it, not the SHA-256 (sourcecheck_test.go).
		q.stamp(id, *st)
	}
	return id, err
}

type photosNewItem struct {
	Name        string
	Description string
}

// isBatchCreate tells a batch's creation calls among the journal's jobs.
func isBatchCreate(s transfer.Snapshot) bool {
	return s.Type == transfer.Call && delivery.RouteOf(s.URL).Kind == delivery.KindPhotosItems
}

// addBatchCreate queues the batchCreate call for uploads (with items'
// names and descriptions, in order), into the album albumID or the one
// made by job album if given, after job prev if given.
func (q *Queue) addBatchCreate(root, album, albumID string, uploads []string, items []photosNewItem, prev, label string) (string, error) {
	// The template's places for results are NULs (transfer.Spec.Quote);
	// a marker no description can hold stands for them while encoding.
	var nonce [12]byte
	rand.Read(nonce[:])
	mark := "carrier-quote-" + hex.EncodeToString(nonce[:])
	type simple struct {
		UploadToken string `json:"uploadToken"`
		FileName    string `json:"fileName"`
	}
	type newItem struct {
		Description     string `json:"description,omitempty"`
		SimpleMediaItem simple `json:"simpleMediaItem"`
	}
	body := struct {
		AlbumID       string    `json:"albumId,omitempty"`
		NewMediaItems []newItem `json:"newMediaItems"`
	}{}
	var quote, needs []string
	switch {
	case album != "":
		body.AlbumID = mark
		quote = append(quote, album+".id")
		needs = append(needs, album)
	case albumID != "":
		body.AlbumID = albumID
	}
	for i, it := range items {
		body.NewMediaItems = append(body.NewMediaItems, newItem{Description: it.Description, SimpleMediaItem: simple{UploadToken: mark, FileName: it.Name}})
		quote = append(quote, uploads[i])
		needs = append(needs, uploads[i])
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	// The album and the descriptions a call that makes its expired items
	// again needs are the delivery's (photosAgain): the spool file goes
	// once the call is done, and the process that saw it done may die
	// before it queued that call. Calls queued before deliveries kept
	// them in their record's Metadata (template).
	data = bytes.ReplaceAll(data, []byte(`"`+mark+`"`), []byte{0})
	if prev != "" {
		needs = append(needs, prev)
	}
	return q.AddCall(transfer.Spec{URL: root + "/v1/mediaItems:batchCreate", Label: label, Quote: quote, Needs: needs}, data)
}
