package compose

import (
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"strings"
	"unicode/utf8"
)

// LimitTimeline is the Mirror API's media limit ("10 MB", read as MiB like
// Gmail's "35MB").
const LimitTimeline = 10 << 20

// TimelineItem is a post to the Mirror timeline: a picture, video or sound
// with a caption.
type TimelineItem struct {
	Media  string // path to the picture, video or sound
	Text   string // caption
	HTML   string // optional HTML caption
	Notify bool   // notification level DEFAULT
}

// TimelineMedia is a checked media file for the timeline.
type TimelineMedia struct {
	Path      string
	MediaType string
	Size      int64
}

// CheckTimelineMedia reads what a file is and refuses anything that is not
// a picture, video or sound under the limit.
func CheckTimelineMedia(path string) (*TimelineMedia, error) {
	if err := checkReadable(path); err != nil {
		return nil, &InputError{[]Problem{{"Media", err.Error()}}}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{[]Problem{{"Media", fmt.Sprintf("cannot read %s: %v", path, unwrapPathError(err))}}}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &InputError{[]Problem{{"Media", fmt.Sprintf("cannot read %s: %v", path, err)}}}
	}
	mt, err := DetectType(f, path)
	if err != nil {
		return nil, &InputError{[]Problem{{"Media", fmt.Sprintf("cannot read %s: %v", path, err)}}}
	}
	base, _, _ := mime.ParseMediaType(mt)
	if sniffed := sniff(f); strings.HasPrefix(sniffed, "text/") {
		// Text is never media, whatever its name says.
		base = sniffed
	}
	if !isTimelineType(base) {
		return nil, &InputError{[]Problem{{"Media", fmt.Sprintf("%s is %s; the timeline takes pictures, videos and sounds only", path, base)}}}
	}
	if fi.Size() > LimitTimeline {
		return nil, &SizeError{Method: "timeline", Size: fi.Size(), Limit: LimitTimeline}
	}
	return &TimelineMedia{Path: path, MediaType: base, Size: fi.Size()}, nil
}

func isTimelineType(mt string) bool {
	return strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "video/")
}

// Metadata is the TimelineItem JSON sent with the media.
func (t *TimelineItem) Metadata() ([]byte, error) {
	if !utf8.ValidString(t.Text) || !utf8.ValidString(t.HTML) {
		return nil, &InputError{[]Problem{{"Caption", "is not valid UTF-8"}}}
	}
	item := map[string]any{}
	if t.Text != "" {
		item["text"] = t.Text
	}
	if t.HTML != "" {
		item["html"] = t.HTML
	}
	if t.Notify {
		item["notification"] = map[string]string{"level": "DEFAULT"}
	}
	return json.Marshal(item)
}
