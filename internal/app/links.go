package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/internal/gapi"
	"carrier/transfer"
)

// A message whose files do not fit goes as one graph of jobs, all in the
// journal: each large file to the sender's Google Drive (resumable, under
// an id asked for beforehand, so that its link is known before a byte
// goes and the message can be written at once), then each file shared
// (one Call per recipient, or one for anyone with the link), then the
// message with the links, which waits for all of them. A crash, a sleep or
// a restart resumes each job where its server says it stands; the message
// goes once, after the last share.

// LinkOptions are how a message's large files are shared.
type LinkOptions struct {
	Policy    compose.LinkPolicy
	Threshold int64         // a file over it goes as a link (0: compose.DefaultLinkThreshold)
	Share     message.Share // who may open them
	Expiry    time.Duration // recipients' access ends after it (0: never; Drive allows up to a year)
	Now       func() time.Time
	// Choose decides for the attachments it names, whatever Policy says:
	// true sends one as a link, false attaches it (the desktop app's
	// per-file choice). The others follow Policy.
	Choose map[string]bool
	// Replaces is the message this one was reopened from (Reopen in
	// Compose), "" for none: once this one is queued, that one is
	// cancelled if it could still go and its kept fields go (Replace), so
	// it is neither sent nor reopened a second time.
	Replaces string
	// SendAt holds the last bytes of a message that is sent (not a draft
	// saved) until then: Undo send's window, now plus UndoWindow. Zero:
	// it goes as soon as it can.
	SendAt time.Time
	// May says whether the account allows Carrier Drive (auth.Links),
	// asked by Submit before anything is queued when a file goes as a
	// link: nil when it does, an error (a *NotAllowedError when the
	// person can allow it) when not. Nil: nobody can say; it is not
	// asked.
	May func(context.Context, auth.Kind) error
}

// MaxLinkExpiry is Drive's limit on a permission's expiration.
const MaxLinkExpiry = 365 * 24 * time.Hour

// ErrDriveFull says the files would not fit in the sender's Drive.
var ErrDriveFull = errors.New("Google Drive has no room for these files")

// Doer sends one HTTP request (an *http.Client is one): what a front end
// may hand the app's Google calls instead of http.DefaultClient.
type Doer = gapi.Doer

// Drive is the API the links go through: root (as for Gmail) and what
// authorizes a request there.
type Drive struct {
	Root   string
	Auth   transfer.Authorizer
	Client gapi.Doer // nil: http.DefaultClient
}

// api is the Google API client for service ("Google Drive", "Gmail") at
// the Drive's root: one read limit, a 401 refreshed once, transient
// failures of repeatable calls tried again (internal/gapi).
func (d Drive) api(service string) *gapi.Client {
	return &gapi.Client{Root: d.Root, Auth: d.Auth, HTTP: d.Client, Service: service}
}

func (d Drive) get(ctx context.Context, path string, v any) error {
	return d.api("Google Drive").Get(ctx, path, v)
}

// do makes one request of Drive, with a JSON body if given, and reads
// the JSON answer into v.
func (d Drive) do(ctx context.Context, method, path string, body []byte, v any) error {
	return d.api("Google Drive").Do(ctx, gapi.Call{Method: method, Path: path, Body: body}, v)
}

// free is what the Drive has left, -1 when it has no limit.
func (d Drive) free(ctx context.Context) (int64, error) {
	var about struct {
		StorageQuota struct {
			Limit string `json:"limit"`
			Usage string `json:"usage"`
		} `json:"storageQuota"`
	}
	if err := d.get(ctx, "/drive/v3/about?fields=storageQuota", &about); err != nil {
		return 0, err
	}
	if about.StorageQuota.Limit == "" {
		return -1, nil // unlimited (some Workspace plans)
	}
	limit, err1 := strconv.ParseInt(about.StorageQuota.Limit, 10, 64)
	usage, err2 := strconv.ParseInt(about.StorageQuota.Usage, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("Google Drive's storage quota is unreadable")
	}
	return max(limit-usage, 0), nil
}

// StorageFree is what the account's storage has left (Drive's
// about.storageQuota: Gmail and Photos share it), -1 when it has no limit
// or the sign-in cannot read it: one that reaches Photos but not Drive is
// refused (403), and Photos then refuses what does not fit, item by item.
func (d Drive) StorageFree(ctx context.Context) (int64, error) {
	free, err := d.free(ctx)
	if gapi.StatusOf(err) == http.StatusForbidden {
		return -1, nil
	}
	return free, err
}

// ids asks Drive for n ids for files to come.
func (d Drive) ids(ctx context.Context, n int) ([]string, error) {
	var g struct {
		IDs []string `json:"ids"`
	}
	if err := d.get(ctx, "/drive/v3/files/generateIds?space=drive&count="+strconv.Itoa(n), &g); err != nil {
		return nil, err
	}
	if len(g.IDs) < n {
		return nil, fmt.Errorf("Google Drive gave %d ids for %d files", len(g.IDs), n)
	}
	for _, id := range g.IDs[:n] {
		if id == "" || strings.ContainsAny(id, "/?#%") {
			return nil, fmt.Errorf("Google Drive gave an unusable id %q", Printable(id))
		}
	}
	return g.IDs[:n], nil
}

// ViewLink is where a recipient opens Drive file id: Drive's own address
// for Google's API, the sandbox's page for the sandbox.
func ViewLink(root, id string) string {
	if u, err := url.Parse(root); err == nil && strings.EqualFold(u.Host, "www.googleapis.com") {
		return "https://drive.google.com/file/d/" + url.PathEscape(id) + "/view?usp=drivesdk"
	}
	return strings.TrimRight(root, "/") + "/file/d/" + url.PathEscape(id) + "/view?usp=drivesdk"
}

// driveFields are what Carrier asks of a file it uploaded: its size and
// checksums (the engine compares them with the file) and its link.
const driveFields = "id,name,size,mimeType,md5Checksum,sha256Checksum,webViewLink"

// recipients are the message's addresses, each once.
func recipients(msg *compose.Message) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{msg.To, msg.Cc, msg.Bcc} {
		addrs, _ := compose.ParseAddresses("", list) // Check has refused a bad one already
		for _, a := range addrs {
			if k := strings.ToLower(a.Address); !seen[k] {
				seen[k] = true
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// SendWithLinks queues msg by method on the API at root (Gmail) with its
// large files as Drive links, as opts says, and returns the jobs: the
// Drive uploads and shares first, the message's last. With nothing to
// link it queues the message alone. settings adds the caller's transfer
// settings (upload type, chunk size) to each upload's spec. Only a
// message that is sent (up.Sends) has its files shared; a draft's are
// shared when it is sent.
func (q *Queue) SendWithLinks(ctx context.Context, d Drive, msg *compose.Message, method compose.Method, up Upload, opts LinkOptions, settings func(*transfer.Spec)) ([]string, error) {
	if err := msg.Check(); err != nil {
		return nil, err
	}
	attach, linked := compose.PlanLinks(msg, method, opts.Policy, opts.Threshold, opts.Choose)
	if settings == nil {
		settings = func(*transfer.Spec) {}
	}
	spec := up.Spec(d.Root)
	settings(&spec)
	if up.Sends() && spec.Type != transfer.Media && spec.Type != transfer.Multipart {
		spec.SendAt = opts.SendAt // only a resumable upload can hold its last bytes
	}
	kept := composedOf(msg, method, up)
	kept.Choose, kept.Share, kept.Expiry = opts.Choose, opts.Share, opts.Expiry
	if len(linked) == 0 {
		id, err := q.addMessage(ctx, spec, msg, method, kept, nil)
		if err != nil {
			return nil, err
		}
		q.Replace(ctx, opts.Replaces)
		return []string{id}, nil
	}
	if opts.Expiry < 0 || opts.Expiry > MaxLinkExpiry {
		return nil, fmt.Errorf("a link's expiry is at most a year (Google Drive's limit), not %s", opts.Expiry)
	}
	if opts.Expiry > 0 && opts.Share == message.ShareAnyone {
		return nil, errors.New("an expiry applies to recipients' access only: Google Drive does not let a link for anyone expire")
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var need int64
	sizes := make([]int64, len(linked))
	for i, p := range linked {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		sizes[i] = fi.Size()
		need += fi.Size()
	}
	free, err := d.free(ctx)
	if err != nil {
		return nil, err
	}
	if free >= 0 && need > free {
		return nil, fmt.Errorf("%w: it has %s free; the %d files to link need %s. Free some space in Drive, or send fewer files", ErrDriveFull, compose.HumanSize(free), len(linked), compose.HumanSize(need))
	}
	ids, err := d.ids(ctx, len(linked))
	if err != nil {
		return nil, err
	}
	who, share := recipients(msg), opts.Share
	if !up.Sends() {
		// A draft (or a message put in the sender's own mailbox) reaches
		// nobody yet: its files go up so its links are real, shared with
		// no one until it is sent (ShareLinked).
		who, share = nil, message.ShareRecipients
	}
	// One delivery: the files' uploads and shares, then the message,
	// which needs them and so belongs to it too.
	dl, err := q.BeginDelivery(delivery.KindOf(spec.URL), msg.Label(), q.AccountOr(spec.Account))
	if err != nil {
		return nil, err
	}
	defer q.EndDelivery(dl)
	var jobs []string
	undo := func(err error) ([]string, error) {
		for i := len(jobs) - 1; i >= 0; i-- {
			q.Cancel(context.WithoutCancel(ctx), jobs[i])
		}
		return nil, err
	}
	links := make([]compose.Link, len(linked))
	for i, p := range linked {
		added, err := q.addDriveFile(d, p, ids[i], share, who, opts.Expiry, now, Owned(dl, settings))
		jobs = append(jobs, added...)
		if err != nil {
			return undo(err)
		}
		links[i] = compose.Link{Name: compose.AttachmentName(p), Size: sizes[i], URL: ViewLink(d.Root, ids[i])}
	}
	withLinks := *msg
	withLinks.Attachments, withLinks.Links = attach, links
	spec.Needs = append([]string(nil), jobs...)
	id, err := q.addMessage(ctx, spec, &withLinks, method, kept, dl)
	if err != nil {
		return undo(err)
	}
	q.Replace(ctx, opts.Replaces)
	return append(jobs, id), nil
}

func orAnyone(addr string) string {
	if addr == "" {
		return "anyone with the link"
	}
	return addr
}

// addCall queues one API call (transfer.Call) whose JSON body is kept in
// the spool until the call is done, after the jobs it needs.
func (q *Queue) addCall(url string, body any, label string, needs ...string) (string, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	return q.addCallData(url, data, label, nil, needs)
}

// addDriveFile queues the upload of the file at p to Drive under id,
// then its shares (one for anyone, or one per address, reader, ending
// after expiry if given); it returns the jobs it queued, the upload first,
// even when a later one could not be queued.
func (q *Queue) addDriveFile(d Drive, p, id string, share message.Share, who []string, expiry time.Duration, now func() time.Time, settings func(*transfer.Spec)) ([]string, error) {
	name := compose.AttachmentName(p)
	ctype := mime.TypeByExtension(strings.ToLower(filepath.Ext(p)))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	meta, _ := json.Marshal(map[string]string{"id": id, "name": name, "mimeType": ctype})
	s := transfer.Spec{URL: d.Root + "/upload/drive/v3/files?fields=" + url.QueryEscape(driveFields), Method: http.MethodPost,
		ContentType: ctype, Metadata: meta, Path: p, Label: name + " · to Google Drive",
		// Drive reports the file's SHA-256: computed as the bytes go, it
		// is both the source check and the verification, in one pass
		// (unnamed, the engine would keep a CRC32C and read the file
		// again at the end to compare Drive's SHA-256).
		Checksums: []string{transfer.SumSHA256},
		// A 409 to a new session means an earlier attempt made the
		// file: the engine reads it and checks it is these bytes.
		Existing: d.Root + "/drive/v3/files/" + url.PathEscape(id) + "?fields=" + url.QueryEscape(driveFields)}
	if settings != nil {
		settings(&s)
	}
	if s.Type != transfer.Resumable && s.Type != "" {
		s.Type = transfer.Resumable // a file for Drive goes resumable, whatever the message does
	}
	file, err := q.Add(s)
	if err != nil {
		return nil, err
	}
	jobs := []string{file}
	var grants []map[string]string
	if share == message.ShareAnyone {
		grants = append(grants, map[string]string{"type": "anyone", "role": "reader"})
	} else {
		for _, addr := range who {
			g := map[string]string{"type": "user", "role": "reader", "emailAddress": addr}
			if expiry > 0 {
				g["expirationTime"] = now().Add(expiry).UTC().Format(time.RFC3339)
			}
			grants = append(grants, g)
		}
	}
	for _, g := range grants {
		shared, err := q.addCall(d.Root+"/drive/v3/files/"+url.PathEscape(id)+"/permissions?sendNotificationEmail=false&fields=id,type,role", g,
			name+" · shared with "+orAnyone(g["emailAddress"]), file)
		if err != nil {
			return jobs, err
		}
		jobs = append(jobs, shared)
	}
	return jobs, nil
}

// DriveUpload queues the file at p for the person's Drive, shared as
// share says (with the addresses in who for ShareRecipients; none: not
// shared), after checking Drive has room. It returns the jobs, the
// upload first.
func (q *Queue) DriveUpload(ctx context.Context, d Drive, p string, share message.Share, who []string, expiry time.Duration, settings func(*transfer.Spec)) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a file", p)
	}
	if expiry < 0 || expiry > MaxLinkExpiry {
		return nil, fmt.Errorf("a link's expiry is at most a year (Google Drive's limit), not %s", expiry)
	}
	free, err := d.free(ctx)
	if err != nil {
		return nil, err
	}
	if free >= 0 && fi.Size() > free {
		return nil, fmt.Errorf("%w: it has %s free; %s needs %s", ErrDriveFull, compose.HumanSize(free), filepath.Base(p), compose.HumanSize(fi.Size()))
	}
	ids, err := d.ids(ctx, 1)
	if err != nil {
		return nil, err
	}
	var as transfer.Spec
	if settings != nil {
		settings(&as)
	}
	dl, err := q.BeginDelivery(delivery.KindUpload, filepath.Base(p)+" · to Google Drive", q.AccountOr(as.Account))
	if err != nil {
		return nil, err
	}
	defer q.EndDelivery(dl)
	jobs, err := q.addDriveFile(d, p, ids[0], share, who, expiry, time.Now, Owned(dl, settings))
	if err != nil {
		for i := len(jobs) - 1; i >= 0; i-- {
			q.Cancel(context.WithoutCancel(ctx), jobs[i])
		}
		return nil, err
	}
	return jobs, nil
}
