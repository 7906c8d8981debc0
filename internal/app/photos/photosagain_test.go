package photos

import "testing"

// A batchCreate call's Photos root, where its uploads are made again, is
// what comes before the route, an API root's own path kept.
func TestUpRootIsTheCallsAPIRoot(t *testing.T) {
	for call, want := range map[string]string{
		"https://photoslibrary.googleapis.com/v1/mediaItems:batchCreate": "https://photoslibrary.googleapis.com",
		"http://127.0.0.1:4000/api/v1/mediaItems:batchCreate":            "http://127.0.0.1:4000/api",
	} {
		if got := upRoot(call); got != want {
			t.Errorf("upRoot(%s) = %q, want %q", call, got, want)
		}
	}
}
