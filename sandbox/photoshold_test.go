package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// With batchCreate's answers held, a call's items are made but its client
// hears nothing until the hold ends; a client that goes meanwhile leaves
// the user's turn free, and the call sent again makes nothing new; a
// sandbox that stops ends a hold.
func TestPhotosHeldBatchAnswer(t *testing.T) {
	e := newEnv(t)
	token := e.photosToken(jpegBytes(30, 1000))
	control := func(body any) map[string]any {
		t.Helper()
		r := e.photosJSON("PUT", "/sandbox/v1/photos", body, nil)
		if r.code != 200 {
			t.Fatalf("control: %d %s", r.code, r.body)
		}
		return r.json(t)
	}
	// create sends the call as a client does: again while the call before
	// it still holds the user's turn (409 ABORTED), which lasts until the
	// sandbox has seen that call's client go or its answer written.
	create := func(ctx context.Context) (int, error) {
		for {
			body, _ := json.Marshal(map[string]any{"newMediaItems": itemsOf(token)})
			req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/mediaItems:batchCreate", bytes.NewReader(body))
			for k, v := range auth() {
				req.Header.Set(k, v)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusConflict {
				return resp.StatusCode, nil
			}
			time.Sleep(5 * time.Millisecond) // a client's pause before asking again
		}
	}
	held := func(n float64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for control(map[string]any{})["batchAnswersHeld"] != n {
			if time.Now().After(deadline) {
				t.Fatalf("no %v answers held", n)
			}
			time.Sleep(10 * time.Millisecond) // the count has no event to wait on
		}
	}
	if st := control(map[string]any{"holdBatchAnswers": true}); st["holdBatchAnswers"] != true {
		t.Fatalf("the hold is not on: %v", st)
	}
	// A client that goes while its answer is held.
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := create(ctx)
		gone <- err
	}()
	held(1)
	if items := e.listItems(""); len(items) != 1 {
		t.Fatalf("%d items while the answer is held, want the 1 made", len(items))
	}
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("the client heard an answer while it was held")
	}
	// The next call is held too, and answered once the hold ends.
	answered := make(chan int, 1)
	go func() {
		code, err := create(context.Background())
		if err != nil {
			code = -1
		}
		answered <- code
	}()
	held(2)
	select {
	case code := <-answered:
		t.Fatalf("answered while held: %d", code)
	default:
	}
	control(map[string]any{"holdBatchAnswers": false})
	select {
	case code := <-answered:
		if code != 200 {
			t.Fatalf("after the hold: %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the hold ended")
	}
	if items := e.listItems(""); len(items) != 1 {
		t.Fatalf("%d items, want 1: the call sent again made another", len(items))
	}
	// A sandbox that stops ends a hold whose client stays.
	control(map[string]any{"holdBatchAnswers": true})
	ended := make(chan struct{})
	go func() {
		create(context.Background())
		close(ended)
	}()
	held(3)
	e.sb.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the held call outlived its sandbox")
	}
}
