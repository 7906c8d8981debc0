package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"carrier/internal/app/photos"
	"carrier/sandbox"
)

// quotaEnv is a sandbox whose Photos requests are counted.
func quotaEnv(t *testing.T) (*sendEnv, *sandbox.Sandbox, *atomic.Int64) {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	var photosCalls atomic.Int64
	h := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			photosCalls.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	return &sendEnv{t: t, url: srv.URL, state: t.TempDir()}, sb, &photosCalls
}

// shiftClock lets the test move the commands' clock on (shift) and end
// resume's wait for a reset itself: each wait sends the test a channel.
func shiftClock(t *testing.T) (shift func(time.Duration), waits chan chan time.Time) {
	t.Helper()
	waits = make(chan chan time.Time, 4)
	old := quotaWait
	quotaWait = func(time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		waits <- c
		return c
	}
	t.Cleanup(func() { quotaWait = old; clockShift.Store(0) })
	return func(d time.Duration) { clockShift.Store(int64(d)) }, waits
}

// waitingResume runs `carrier resume --wait` and returns once it waits for
// a reset; reset ends that wait (after the test moved its clock and the
// quota on) and returns how the resume ended.
func waitingResume(t *testing.T, e *sendEnv, waits chan chan time.Time) (reset func() (errs string, code int)) {
	t.Helper()
	type result struct {
		errs string
		code int
	}
	done := make(chan result, 1)
	go func() {
		_, er, c := e.runText("resume", "--wait")
		done <- result{er, c}
	}()
	var fire chan time.Time
	select {
	case fire = <-waits:
	case r := <-done:
		t.Fatalf("resume --wait ended without waiting: exit %d\n%s", r.code, r.errs)
	case <-time.After(30 * time.Second):
		t.Fatal("resume --wait did not wait for the reset")
	}
	return func() (string, int) {
		t.Helper()
		fire <- time.Now()
		select {
		case r := <-done:
			return r.errs, r.code
		case <-time.After(60 * time.Second):
			t.Fatal("resume --wait did not finish after the reset")
		}
		return "", 0
	}
}

// Uploads Google Photos' daily quota stopped are left for its reset by
// `carrier resume`, with their batch's call: no request spent on them,
// the reset named, exit 5. With --wait it waits for the reset (the
// clock's) and sends them, the batch finished, every file in Photos once.
func TestResumeLeavesPhotosQuotaForItsReset(t *testing.T) {
	e, sb, photosCalls := quotaEnv(t)
	shift, waits := shiftClock(t)
	files := photoFiles(t, 3)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 3}) // the album found, made, and the first upload started
	out, errs, code := e.runText(append([]string{"photos", "--album", "Quota"}, files...)...)
	if code != ExitQuota || !strings.Contains(errs, "3 of 3 files are not in Google Photos yet") || !strings.Contains(errs, "quota for today is used up") {
		t.Fatalf("photos over the quota: exit %d\n%s\n%s", code, out, errs)
	}

	before := photosCalls.Load()
	out, errs, code = e.runText("resume")
	if code != ExitQuota {
		t.Fatalf("resume before the reset: exit %d, want %d\n%s\n%s", code, ExitQuota, out, errs)
	}
	for _, want := range []string{"uploads to Google Photos wait for its daily quota", "(midnight Pacific time)", "carrier resume --wait"} {
		if !strings.Contains(errs, want) {
			t.Errorf("resume's words lack %q:\n%s", want, errs)
		}
	}
	if n := photosCalls.Load() - before; n != 0 {
		t.Errorf("resume before the reset sent %d requests to Google Photos; the quota refuses them all", n)
	}
	list, _, _ := e.runText("resume", "--list")
	if !strings.Contains(list, "waits for Google Photos' daily quota") {
		t.Errorf("resume --list does not say what waits for the quota:\n%s", list)
	}

	// --wait: the reset comes (the test's clock), the quota with it.
	reset := waitingResume(t, e, waits)
	if n := photosCalls.Load() - before; n != 0 {
		t.Errorf("resume --wait sent %d requests before the reset", n)
	}
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1000})
	shift(25 * time.Hour)
	errs, code = reset()
	if code != 0 || !strings.Contains(errs, "Waiting for it") {
		t.Fatalf("resume --wait: exit %d\n%s", code, errs)
	}
	albums, _ := e.get("/v1/albums")["albums"].([]any)
	if len(albums) != 1 || albums[0].(map[string]any)["title"] != "Quota" || albums[0].(map[string]any)["mediaItemsCount"] != "3" {
		t.Errorf("albums after the reset: %v, want Quota with 3 items\n%s", albums, errs)
	}
}

// After the reset, `carrier resume` sends the stopped uploads; the quota
// used up again on the way stops the rest anew: not a failure but a wait
// for the next reset (exit 5). With --wait, an upload stopped so is sent
// again by the same process once that reset comes, and the batch ends.
func TestResumeAfterTheResetMeetsTheQuotaAgain(t *testing.T) {
	e, sb, _ := quotaEnv(t)
	shift, waits := shiftClock(t)
	files := photoFiles(t, 4)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 3}) // the album found, made, and the first upload started
	if _, errs, code := e.runText(append([]string{"photos", "--album", "Quota"}, files...)...); code == 0 {
		t.Fatalf("photos over the quota went through\n%s", errs)
	}
	reset := photos.PhotosDailyReset(time.Now())
	day := 24 * time.Hour
	shift(time.Until(reset) + time.Minute)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 4}) // room for one more start
	out, errs, code := e.runText("resume")
	if code != ExitQuota || !strings.Contains(errs, "2 uploads to Google Photos wait for its daily quota") {
		t.Fatalf("resume after the reset, the quota used up again: exit %d, want %d\n%s\n%s", code, ExitQuota, out, errs)
	}
	if strings.Contains(errs, "carrier resume: job") || strings.Contains(errs, "waits: it needs") {
		t.Errorf("the quota's stop is worded as a failure:\n%s", errs)
	}

	shift(time.Until(reset) + day + time.Minute)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 5}) // one more again
	next := waitingResume(t, e, waits)
	shift(time.Until(reset) + 2*day + time.Minute)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1000})
	errs, code = next()
	if code != 0 || !strings.Contains(errs, "1 upload to Google Photos waits for its daily quota") {
		t.Fatalf("resume --wait: exit %d\n%s", code, errs)
	}
	albums, _ := e.get("/v1/albums")["albums"].([]any)
	if len(albums) != 1 || albums[0].(map[string]any)["mediaItemsCount"] != "4" {
		t.Errorf("albums: %v, want Quota with 4 items\n%s", albums, errs)
	}
}

// A batch whose upload fails for good (its file was deleted meanwhile) is
// not waited for in vain: resume ends, saying the upload failed and what
// waits for it, exit 1.
func TestResumeEndsWhenABatchsUploadFailsForGood(t *testing.T) {
	e, sb, _ := quotaEnv(t)
	shift, _ := shiftClock(t)
	files := photoFiles(t, 3)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 3}) // the album found, made, and the first upload started
	if _, errs, code := e.runText(append([]string{"photos", "--album", "Gone"}, files...)...); code == 0 {
		t.Fatalf("photos over the quota went through\n%s", errs)
	}
	if err := os.Remove(files[2]); err != nil {
		t.Fatal(err)
	}
	shift(time.Until(photos.PhotosDailyReset(time.Now())) + time.Minute)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1000})
	type result struct {
		errs string
		code int
	}
	done := make(chan result, 1)
	go func() {
		_, er, c := e.runText("resume")
		done <- result{er, c}
	}()
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.errs, "shot 3.png") || !strings.Contains(r.errs, "waits: it needs") {
			t.Fatalf("resume: exit %d\n%s", r.code, r.errs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("resume still waits for a batch whose upload failed for good")
	}
}

// resume --wait goes by the wall clock: a timer's clock stops while the
// computer sleeps, so it looks at the time at least once a minute and goes
// on once the reset has passed, however the timers ran.
func TestResumeWaitGoesByTheWallClock(t *testing.T) {
	e, sb, photosCalls := quotaEnv(t)
	shift, waits := shiftClock(t)
	var longest atomic.Int64 // the longest wait asked of a timer
	fake := quotaWait
	quotaWait = func(d time.Duration) <-chan time.Time {
		longest.Store(max(longest.Load(), int64(d)))
		return fake(d)
	}
	files := photoFiles(t, 2)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 3}) // the album found, made, and the first upload started
	if _, errs, code := e.runText(append([]string{"photos", "--album", "Asleep"}, files...)...); code != ExitQuota {
		t.Fatalf("photos over the quota: exit %d\n%s", code, errs)
	}
	before := photosCalls.Load()
	done := make(chan int, 1)
	go func() {
		_, _, c := e.runText("resume", "--wait")
		done <- c
	}()
	next := func(what string) chan time.Time {
		select {
		case c := <-waits:
			return c
		case c := <-done:
			t.Fatalf("resume --wait ended (exit %d) %s", c, what)
		case <-time.After(30 * time.Second):
			t.Fatalf("resume --wait did not wait %s", what)
		}
		return nil
	}
	// A minute by the timer; the reset still hours away: it waits again.
	next("for the reset") <- time.Now()
	slept := next("again while the reset is still to come")
	if n := photosCalls.Load() - before; n != 0 {
		t.Errorf("%d requests to Google Photos before the reset", n)
	}
	if d := time.Duration(longest.Load()); d > time.Minute {
		t.Errorf("a timer was asked to wait %v: a sleep in it would pass the reset unseen", d)
	}
	// The computer slept through the reset: the wall clock is past it,
	// though no timer says so.
	shift(time.Until(photos.PhotosDailyReset(time.Now())) + time.Hour)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1000})
	slept <- time.Now()
	select {
	case c := <-done:
		if c != 0 {
			t.Fatalf("resume --wait after the reset: exit %d", c)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("resume --wait did not go on after the reset")
	}
}
