package photos

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// PhotosDailyRequests is Google Photos' quota of requests a day for an app
// (every upload and every call counts), turning over at midnight Pacific
// (PhotosDailyReset).
const PhotosDailyRequests = 10000

// PhotosPlan is what a batch needs of Google Photos' daily quota, said
// before its first byte: one request per file's upload and one per call
// of up to 50 items, spent on whole items (each call goes once its
// uploads are done, before the next call's uploads start).
type PhotosPlan struct {
	Files    int       // the files to send
	Requests int       // what they need: an upload each, and a call per 50
	Quota    int       // the day's requests
	Left     int       // of today's, as far as this Carrier knows
	Today    int       // the items made today
	Days     int       // the days it takes, today the first
	Reset    time.Time // when today's quota turns over
}

// PlanPhotos plans n files against quota requests a day (0: Google's
// PhotosDailyRequests), left of them today, at now.
func PlanPhotos(n, quota, left int, now time.Time) PhotosPlan {
	if quota <= 0 {
		quota = PhotosDailyRequests
	}
	left = max(0, min(left, quota))
	p := PhotosPlan{Files: n, Quota: quota, Left: left, Reset: PhotosDailyReset(now), Days: 1}
	if n == 0 {
		return p
	}
	p.Requests = n + (n+MaxPhotosBatch-1)/MaxPhotosBatch
	// Day by day: the calls whose uploads and own request fit go that
	// day; the requests left over start the next call's uploads, which
	// that call makes items of after the reset.
	budget, carried, first := left, 0, true
	for done := 0; done < n; {
		m := min(MaxPhotosBatch, n-done)
		need := m + 1 - carried
		if need <= budget {
			budget -= need
			carried = 0
			done += m
			if first {
				p.Today += m
			}
			continue
		}
		carried += budget // uploads of this call that went before the reset
		first = false
		p.Days++
		budget = quota
		if p.Days > 100000 {
			break
		}
	}
	return p
}

// PhotosLeftToday is what this Carrier knows of today's Photos requests
// left, of quota a day (0: Google's), from its journal: the uploads and
// calls to root (the Photos API's, by the route table) that were sent
// since the last reset count; a request refused for the daily quota since
// then leaves none. With no journal to read, the whole day is assumed.
func (q *Queue) PhotosLeftToday(root string, quota int, now time.Time) int {
	if quota <= 0 {
		quota = PhotosDailyRequests
	}
	reset := PhotosDailyReset(now)
	since := PhotosDailyReset(reset.Add(-25 * time.Hour)) // the midnight before the next
	used, stopped := 0, false
	// Counted one job at a time, none kept: after a camera roll the
	// history is 20,400 records.
	_, err := q.HistoryWhere(func(r *transfer.Snapshot) bool {
		if r.Updated.Before(since) {
			return false
		}
		if route, at := delivery.RouteRoot(r.URL); !route.Photos() || at != strings.TrimRight(root, "/") {
			return false
		}
		switch {
		case r.State == transfer.StateFailed && errors.Is(r.Cause, transfer.ErrDailyQuota):
			stopped = true
		case r.State == transfer.StateDone:
			used++
		}
		return false
	})
	if err != nil {
		return quota
	}
	if stopped {
		return 0
	}
	return max(0, quota-used)
}

// PhotosDailyReset is when Google's daily quotas turn over after t:
// midnight, Pacific time.
func PhotosDailyReset(t time.Time) time.Time { return delivery.PhotosReset(t) }

// PhotosQuotaWords says a daily quota is used up and when it resets, in
// the person's local time.
func PhotosQuotaWords(now time.Time) string {
	return PhotosQuotaWordsAt(now, PhotosDailyReset(now))
}

// PhotosQuotaWordsAt says the same of the reset at, as seen at now.
func PhotosQuotaWordsAt(now, at time.Time) string {
	return fmt.Sprintf("Google Photos' quota for today is used up; it resets at %s (midnight Pacific time), in %s", at.Local().Format("15:04 Mon 2 Jan"), at.Sub(now).Round(time.Minute))
}
