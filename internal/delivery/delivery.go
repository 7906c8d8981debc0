// Package delivery is the home of what a person sends: a message with the
// Drive uploads and shares its links need, a draft, a batch of pictures
// for Google Photos with its album and batchCreate calls, or a plain
// upload. The engine (transfer) knows jobs; a Delivery names its jobs
// (Members, each with its Role), and each job names its delivery back
// (transfer.Spec.Owner holds Delivery.ID), so neither is guessed again.
//
// The life of a delivery: a front end makes it (NewID) and stores it
// (Store.Put) before it queues the jobs, whose Owner is its id; from then
// on Status(d, snapshots) says where it stands (the phase, the bytes, the
// member that failed or waits, and the verbs the lifecycle table allows),
// the one place that knows phases. At every entry (a start, a list) it is
// checked against the journal (Reconcile): members whose jobs were
// forgotten are dropped, and a delivery none of whose jobs remain goes
// (Store.Delete). Journals from before deliveries carry no owners: Adopt
// groups their jobs by what they need and reads each one's role off its
// URL (RouteOf), the only place a kind is guessed from a URL.
//
// A delivery is stored as one private file per delivery in a folder
// beside the journal (STATE/deliveries), replaced whole and durably, and
// read again on every Get and List, so the window and `carrier` may share
// the folder.
package delivery

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"carrier/compose"
)

// Kind is what a delivery is.
type Kind string

const (
	KindMessage Kind = "message" // a message (sent, or put in the mailbox), with its Drive links if any
	KindDraft   Kind = "draft"   // a draft saved or updated, with its Drive links if any
	KindPhotos  Kind = "photos"  // a batch of pictures and videos for Google Photos
	KindUpload  Kind = "upload"  // a plain upload (the timeline, Cloud Storage, a file to Drive)
)

// Kinds lists every kind.
var Kinds = []Kind{KindMessage, KindDraft, KindPhotos, KindUpload}

func (k Kind) valid() bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Role is the part a job plays in its delivery.
type Role string

const (
	RoleMessage    Role = "message"     // the message (or draft) itself, sent to Gmail last
	RoleDriveFile  Role = "drive-file"  // a file the message links to, uploaded to Drive
	RoleDriveShare Role = "drive-share" // a permission call sharing a Drive file
	RolePhoto      Role = "photo"       // a picture or video uploaded to Photos
	RoleAlbum      Role = "album"       // the call that made the album (batches from before albums were made up front)
	RoleItems      Role = "items"       // a batchCreate call making media items of uploads
	RoleUpload     Role = "upload"      // a plain upload
)

// Roles lists every role.
var Roles = []Role{RoleMessage, RoleDriveFile, RoleDriveShare, RolePhoto, RoleAlbum, RoleItems, RoleUpload}

func (r Role) valid() bool {
	for _, x := range Roles {
		if x == r {
			return true
		}
	}
	return false
}

// carriesBytes reports whether a member in role r uploads a file (the
// calls carry a small body, not the person's bytes).
func (r Role) carriesBytes() bool {
	return r == RoleMessage || r == RoleDriveFile || r == RolePhoto || r == RoleUpload
}

// Member is one job of a delivery.
type Member struct {
	Job  string `json:"job"`
	Role Role   `json:"role"`
	// File is the person's path of the file the job uploads, for a file
	// member ("" for a call, and for the message, whose bytes are a spool).
	File string `json:"file,omitempty"`
}

// Delivery is what a person sent, once: its jobs and what the person
// asked for.
type Delivery struct {
	ID      string    `json:"id"` // "d-" and hex digits (NewID)
	Kind    Kind      `json:"kind"`
	Created time.Time `json:"created"`
	Account string    `json:"account,omitempty"` // the sign-in it goes with, "" the server's default
	Label   string    `json:"label,omitempty"`   // its name for people
	Members []Member  `json:"members"`
	// DraftID is the Gmail draft a message updates or sends, or the one a
	// draft delivery made (once known).
	DraftID string `json:"draftId,omitempty"`
	// Album is the title of the Photos album a batch goes to, AlbumID its
	// id; "" for none.
	Album   string `json:"album,omitempty"`
	AlbumID string `json:"albumId,omitempty"`
	// Description is the description of a batch's items that have none
	// of their own, Describe each file's own, by its path: with AlbumID,
	// what a call that makes expired items again needs, kept here before
	// the first job is queued (a call's body goes with its spool file).
	Description string            `json:"description,omitempty"`
	Describe    map[string]string `json:"describe,omitempty"`
	// QuotaReset is when Photos' daily quota turns over, while the
	// delivery's jobs wait for it (they are paused until then); zero
	// otherwise.
	QuotaReset time.Time `json:"quotaReset,omitzero"`
	// Files is how many files a Photos batch sends, said before its first
	// job is queued: a camera roll's 20,000 take minutes to queue (each
	// job written to the disk first), and while they are its members
	// count fewer. 0: its members say.
	Files int `json:"files,omitempty"`
	// Bytes is what those files hold, said with Files: the batch's bar
	// counts it all, not what is queued so far.
	Bytes int64 `json:"bytes,omitempty"`
	// Composed is what the person wrote, for a message or draft written
	// in Carrier; nil otherwise.
	Composed *Composed `json:"composed,omitempty"`
}

// DescriptionOf is the description a batch gives the item of the file at
// path.
func (d *Delivery) DescriptionOf(path string) string {
	if s, ok := d.Describe[path]; ok {
		return s
	}
	return d.Description
}

// Member is the member whose job is id, and whether there is one.
func (d *Delivery) Member(job string) (Member, bool) {
	for _, m := range d.Members {
		if m.Job == job {
			return m, true
		}
	}
	return Member{}, false
}

// Jobs are the members' jobs, in the members' order.
func (d *Delivery) Jobs() []string {
	out := make([]string, len(d.Members))
	for i, m := range d.Members {
		out[i] = m.Job
	}
	return out
}

// Share is who may open a message's Drive files.
type Share int

const (
	ShareRecipients Share = iota // each recipient, by address (Gmail's default)
	ShareAnyone                  // anyone with the link
)

// Composed is a message as the person wrote it in Compose: what reopening
// it puts back into the form.
type Composed struct {
	To, Cc, Bcc []string
	Subject     string
	Text        string
	HTML        string `json:",omitempty"`
	// Attachments are the files the person chose, those that went as
	// Drive links included, by their paths on this computer.
	Attachments []string
	Method      compose.Method
	// DraftID is the draft the message updates or sends, "" for none.
	DraftID string `json:",omitempty"`
	// Choose is the person's choice per file (true: a Drive link).
	Choose map[string]bool `json:",omitempty"`
	Share  Share           `json:",omitempty"`
	Expiry time.Duration   `json:",omitempty"`
	// From is the job the fields were kept for, "" for a draft opened
	// from the Mailbox: a message sent from them replaces it. Not stored.
	From string `json:"-"`
}

// Message is the compose.Message the fields make.
func (c *Composed) Message() *compose.Message {
	return &compose.Message{To: c.To, Cc: c.Cc, Bcc: c.Bcc, Subject: c.Subject, Text: c.Text, HTML: c.HTML,
		Attachments: append([]string(nil), c.Attachments...)}
}

// Missing are the attachments no longer at their paths (moved, deleted).
func (c *Composed) Missing() []string {
	var gone []string
	for _, p := range c.Attachments {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			gone = append(gone, p)
		}
	}
	return gone
}

// NewID is a fresh delivery id: "d-" and 32 random hex digits.
func NewID() string {
	var b [16]byte
	rand.Read(b[:]) // crypto/rand's Read does not fail (Go 1.24)
	return "d-" + hex.EncodeToString(b[:])
}

var idForm = regexp.MustCompile(`^d-[0-9a-f]{1,64}$`)

// ErrBadID refuses an id that is not a delivery's ("d-" and hex digits):
// it names a file, so nothing else may reach the folder.
var ErrBadID = errors.New("not a delivery id (d- and hex digits)")

func checkID(id string) error {
	if !idForm.MatchString(id) {
		return fmt.Errorf("%q: %w", id, ErrBadID)
	}
	return nil
}

// Version is the version of the stored form this Carrier writes.
const Version = 1

// ErrNewer says a delivery was stored by a newer Carrier, in a form this
// one does not know: it is left as it is.
var ErrNewer = errors.New("the delivery was stored by a newer Carrier")

// stored is the file's form: the version first, then the delivery.
type stored struct {
	Version int `json:"version"`
	Delivery
}

// Check says what is wrong with d, nil when nothing is: its id, kind,
// each member's job and role, and no job twice.
func (d *Delivery) Check() error {
	if err := checkID(d.ID); err != nil {
		return err
	}
	if !d.Kind.valid() {
		return fmt.Errorf("delivery %s: unknown kind %q", d.ID, d.Kind)
	}
	seen := make(map[string]bool, len(d.Members))
	for _, m := range d.Members {
		switch {
		case m.Job == "":
			return fmt.Errorf("delivery %s: a member without a job", d.ID)
		case !m.Role.valid():
			return fmt.Errorf("delivery %s: job %s has an unknown role %q", d.ID, m.Job, m.Role)
		case seen[m.Job]:
			return fmt.Errorf("delivery %s: job %s is a member twice", d.ID, m.Job)
		}
		seen[m.Job] = true
	}
	return nil
}

// Marshal is d's stored form, at Version: compact, not indented, since
// a camera roll's delivery of 20,400 members was three copies of its
// JSON at once (the encoder's, its copy, the indented one), at the top of
// the batch's memory (issue 29). Unmarshal reads either.
func Marshal(d Delivery) ([]byte, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	return json.Marshal(stored{Version: Version, Delivery: d})
}

// Unmarshal reads a stored delivery. A known version is read strictly: a
// field it does not have, a second value after it, an unknown kind or
// role is an error, never a delivery half read. A newer version is
// ErrNewer.
func Unmarshal(data []byte) (Delivery, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Delivery{}, fmt.Errorf("not a stored delivery: %w", err)
	}
	switch {
	case head.Version > Version:
		return Delivery{}, fmt.Errorf("%w (version %d; this one reads %d)", ErrNewer, head.Version, Version)
	case head.Version < 1:
		return Delivery{}, fmt.Errorf("not a stored delivery: no version")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s stored
	if err := dec.Decode(&s); err != nil {
		return Delivery{}, fmt.Errorf("a damaged delivery: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Delivery{}, errors.New("a damaged delivery: more after its end")
	}
	if err := s.Delivery.Check(); err != nil {
		return Delivery{}, err
	}
	return s.Delivery, nil
}
