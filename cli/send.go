package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/gapi"
	"carrier/transfer"
)

func init() {
	register(&Command{Name: "send", Summary: "send a message through Gmail (or save a draft, insert, import)", Run: runSend})
	register(&Command{Name: "timeline", Summary: "post a picture, video or sound to the Mirror timeline", Run: runTimeline})
}

// uploadFlags are the transfer settings of send and timeline.
type uploadFlags struct {
	transferFlags
	endpointFlags
	uploadType string
	chunkSize  int64
}

func (f *uploadFlags) add(fs *flag.FlagSet, dirs app.Dirs) {
	f.transferFlags.add(fs, dirs)
	f.endpointFlags.add(fs, dirs)
	fs.StringVar(&f.uploadType, "upload-type", "resumable", "resumable (the only one that can resume and never sends twice), multipart or media")
	fs.Int64Var(&f.chunkSize, "chunk-size", 0, "the largest request, a multiple of 262144 (default 64 MiB); requests are sized for a server confirmation every few seconds up to it")
}

func (f *uploadFlags) check() (transfer.UploadType, error) {
	typ := transfer.UploadType(f.uploadType)
	if typ != transfer.Resumable && typ != transfer.Multipart && typ != transfer.Media {
		return "", usagef("--upload-type must be resumable, multipart or media, not %q", f.uploadType)
	}
	if f.chunkSize < 0 || f.chunkSize%transfer.ChunkQuantum != 0 {
		return "", usagef("--chunk-size must be a multiple of 262144 (256 KiB), not %d", f.chunkSize)
	}
	return typ, nil
}

// upload runs one job to its end on the target and prints the response.
// add queues spec (nil: as it is).
func (f *uploadFlags) upload(ctx context.Context, env *Env, t *target, spec transfer.Spec, add func(*app.Queue, transfer.Spec) (string, error)) (*transfer.Snapshot, error) {
	q, done, err := runQueue(ctx, env, &f.transferFlags, t.auth)
	if err != nil {
		return nil, err
	}
	defer done()
	q.Bind(t.account)
	spec.ChunkSize = f.chunkSize
	if add == nil {
		add = (*app.Queue).Add
	}
	id, err := add(q, spec)
	if err != nil {
		return nil, err
	}
	if err := finishJob(ctx, env, q, id, true); err != nil {
		return nil, err
	}
	t.remember()
	rec, _ := q.Job(id)
	return &rec, nil
}

func runSend(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "send", "--to ADDR ... [--subject S] (--body TEXT | --body-file F) [--attach FILE]... [--as send|draft|insert|import] [--thread ID] [--label ID]... [--draft-id ID | --send-draft ID] [--endpoint URL] [transfer flags]")
	var mf messageFlags
	mf.register(fs)
	var uf uploadFlags
	uf.add(fs, env.dirs())
	thread := fs.String("thread", "", "Gmail thread id to put the message in")
	var labels stringList
	fs.Var(&labels, "label", "Gmail label id for insert/import (repeatable; default INBOX and UNREAD)")
	draftID := fs.String("draft-id", "", "replace the message of this draft (drafts.update)")
	sendDraft := fs.String("send-draft", "", "send this draft: as it stands, or with the message given by the other flags")
	var lf linkFlags
	lf.add(fs)
	undoWindow := fs.Duration("undo-window", 0, "hold the message this long after it is queued (e.g. 10s, at most 5m): every byte but the last goes, and Ctrl+C within it undoes the send, so nothing reaches anyone (default: no window, sent at once)")
	sendAt := fs.String("at", "", "send later: every byte but the last goes now, the last at this time (2026-12-01T09:00, or a time of day such as 09:00: the next one), at most a year ahead (further than 6 days, the upload starts 6 days before: Google keeps an unfinished upload for a week); the message's Date is that time; carrier waits for it, and Ctrl+C leaves it scheduled")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	lopts, err := lf.options()
	if err != nil {
		return err
	}
	typ, err := uf.check()
	if err != nil {
		return err
	}
	if *draftID != "" && *sendDraft != "" {
		return usagef("give --draft-id (update a draft) or --send-draft (send one), not both")
	}
	switch {
	case *undoWindow < 0 || *undoWindow > app.MaxUndoWindow:
		return usagef("--undo-window is a length of time from 0 to %s, such as 10s, not %s", app.MaxUndoWindow, *undoWindow)
	case *undoWindow > 0 && typ != transfer.Resumable:
		return usagef("--undo-window needs --upload-type resumable: only a resumable upload can hold back its last bytes")
	case *undoWindow > 0 && (*draftID != "" || mf.as != "" && mf.as != "send"):
		return usagef("--undo-window is for a message that is sent, not for a draft, an insert or an import")
	case *sendAt != "" && *undoWindow > 0:
		return usagef("give --at (send later) or --undo-window (send now, with a moment to undo), not both")
	case *sendAt != "" && typ != transfer.Resumable:
		return usagef("--at needs --upload-type resumable: only a resumable upload can hold back its last bytes")
	case *sendAt != "" && (*draftID != "" || *sendDraft != "" || mf.as != "" && mf.as != "send"):
		return usagef("--at is for a new message that is sent, not for a draft, an insert or an import")
	}
	var later time.Time
	if *sendAt != "" {
		if later, err = app.ParseSendAt(*sendAt, sendLaterNow()); err != nil {
			return usagef("--at: %v", err)
		}
	}
	noMessage := len(mf.to)+len(mf.cc)+len(mf.bcc)+len(mf.attach) == 0 && mf.body == "" && mf.bodyFile == "" && mf.subject == ""
	kind := auth.Send
	switch {
	case *draftID != "" || *sendDraft != "" || mf.as == "draft" || mf.as == "drafts":
		kind = auth.Drafts
	case mf.as == "insert" || mf.as == "import":
		kind = auth.Insert
	}
	tok, err := uf.givenToken(env)
	if err != nil {
		return err
	}
	uf.from = mf.from
	t, err := uf.resolve(ctx, tok, kind)
	if err != nil {
		return err
	}
	defer t.close()
	if *sendDraft != "" && noMessage {
		return sendDraftAsIs(ctx, env, t, *sendDraft, lopts)
	}
	msg, method, err := mf.message(env)
	if err != nil {
		return err
	}
	if !later.IsZero() {
		msg.Date = later // the message says when it was sent
	}
	gmail := app.GmailOptions{Thread: *thread, Labels: labels, DraftID: *draftID, SendDraft: *sendDraft}
	if method, err = app.Prepare(msg, method, gmail); err != nil {
		return err
	}
	up, err := app.Message(msg, method, gmail)
	if errors.Is(err, app.ErrLabels) {
		return usagef("--label is for send, insert and import")
	}
	if err != nil {
		return err
	}
	lopts.May = t.may // Drive is asked for only when a message needs it (Submit)
	spec := up.Spec(t.base)
	spec.Type = typ
	queue := func(q *app.Queue, spec transfer.Spec) (string, error) {
		jobs, err := q.SubmitRecipe(ctx, app.Drive{Root: t.base, Auth: t.auth}, msg, method, up, gmail, lopts, func(s *transfer.Spec) {
			s.ChunkSize = spec.ChunkSize
			if s.Type == "" {
				s.Type = spec.Type
			}
		})
		var refused *app.LinksNotAllowed
		if errors.As(err, &refused) {
			return "", fmt.Errorf("%d of the files go as Google Drive links (they are over %s, or the message would not fit): %w; or send with --links never", len(refused.Linked), lf.over, refused.Err)
		}
		if err != nil {
			return "", err
		}
		return jobs[len(jobs)-1], nil // the message: it goes after the rest
	}
	if (*undoWindow > 0 || !later.IsZero()) && up.Sends() {
		return sendHeld(ctx, env, &uf, t, spec, later, *undoWindow, func(q *app.Queue, spec transfer.Spec, at time.Time) (string, error) {
			lopts.SendAt = at
			return queue(q, spec)
		})
	}
	_, err = uf.upload(ctx, env, t, spec, queue)
	return err
}

// ErrUndone ends `carrier send --undo-window` when the person pressed
// Ctrl+C within the window: the message was cancelled and sent to nobody.
var ErrUndone = errors.New("undone: the message was not sent")

// sendHeld queues the message held for an undo window (from now), or
// until a Send later time, and waits for it as upload does. With an undo
// window (`--undo-window`), Ctrl+C (ctx ending) before its end is
// Undo: the message and its Drive parts are cancelled, so nothing reaches
// anyone. Without (`--at`, Send later), Ctrl+C leaves the message
// scheduled in the journal for the desktop app or `carrier resume`.
// After at an interrupt keeps the message as any upload's, for `carrier
// resume`: its last bytes may be on their way.
func sendHeld(ctx context.Context, env *Env, uf *uploadFlags, t *target, spec transfer.Spec, later time.Time, window time.Duration, add func(*app.Queue, transfer.Spec, time.Time) (string, error)) error {
	q, done, err := runQueue(ctx, env, &uf.transferFlags, t.auth)
	if err != nil {
		return err
	}
	defer done()
	q.Bind(t.account)
	spec.ChunkSize = uf.chunkSize
	undo, at := window > 0, later
	if undo {
		at = app.SendAfter(time.Now(), window)
	}
	id, err := add(q, spec, at)
	if err != nil {
		return err
	}
	if undo {
		fmt.Fprintf(env.Stderr, "carrier send: sending in %s: press Ctrl+C to undo\n", undoSeconds(window))
	} else if from := at.Add(-transfer.ScheduleLead); time.Now().Before(from) {
		fmt.Fprintf(env.Stderr, "carrier send: scheduled for %s (in %s) as job %s: its upload starts %s, since Google keeps an unfinished upload for a week, and the last bytes go at the time; Ctrl+C leaves it scheduled for the desktop app or `carrier resume`; `carrier cancel %s` undoes it\n",
			at.Local().Format("2006-01-02 15:04"), waitWords(time.Until(at)), id, from.Local().Format("2006-01-02 15:04"), id)
	} else {
		fmt.Fprintf(env.Stderr, "carrier send: scheduled for %s (in %s) as job %s: every byte but the last goes now, the last at that time; keep this running (Ctrl+C leaves it scheduled; `carrier cancel %s` undoes it)\n",
			at.Local().Format("2006-01-02 15:04"), waitWords(time.Until(at)), id, id)
	}
	err = finishJob(ctx, env, q, id, true)
	if err == nil {
		t.remember()
		if late := app.Lateness(at, time.Now()); !undo && late > 0 {
			fmt.Fprintf(env.Stderr, "carrier send: sent at %s, %s after its time (%s): the computer was asleep or offline then, or the message was still uploading\n",
				time.Now().Format("15:04"), waitWords(late), at.Local().Format("15:04"))
		}
		return nil
	}
	if ctx.Err() == nil || !time.Now().Before(at) {
		return err
	}
	if !undo {
		if s, _ := q.Job(id); s.State.Unfinished() {
			return fmt.Errorf("%w: job %s goes at %s when Carrier runs then (the desktop app, or `carrier resume`); `carrier cancel %s` undoes it", ErrLeftScheduled, id, at.Local().Format("2006-01-02 15:04"), id)
		}
		return err
	}
	undone, uerr := q.Undo(context.WithoutCancel(ctx), id)
	if errors.Is(uerr, app.ErrTooLateToUndo) {
		return fmt.Errorf("too late to undo: the message %s was already sent", id)
	}
	if s, _ := q.Job(id); s.State != transfer.StateCancelled {
		return fmt.Errorf("the message could not be undone (%v); it is kept as job %s: run `carrier cancel %s` to stop it", uerr, id, id)
	}
	if len(undone.Files) > 0 {
		var names []string
		for _, f := range undone.Files {
			names = append(names, app.Printable(f.Name))
		}
		fmt.Fprintf(env.Stderr, "carrier send: the files its links put on Google Drive are kept there: %s\n", strings.Join(names, ", "))
	}
	if uerr != nil {
		return fmt.Errorf("%w, though part of it could not be stopped: %v", ErrUndone, uerr)
	}
	return ErrUndone
}

// sendLaterNow is the clock --at is read against (a test moves it back,
// so a time a few seconds ahead passes Send later's minute).
var sendLaterNow = time.Now

// ErrLeftScheduled ends `carrier send --at` interrupted before its time:
// the message stays scheduled in the journal.
var ErrLeftScheduled = errors.New("interrupted: the message stays scheduled")

// undoSeconds is a window in the words of its line: "10 s".
func undoSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// sendDraftAsIs calls drafts.send on the metadata URI: no upload, the
// draft goes as it stands. The Drive files its links name were uploaded
// unshared when it was saved: they are shared first, with its recipients
// (or anyone, as --share says), so no recipient meets a locked file.
func sendDraftAsIs(ctx context.Context, env *Env, t *target, id string, lopts app.LinkOptions) error {
	d := app.Drive{Root: t.base, Auth: t.auth}
	raw, err := d.ReadDraft(ctx, id)
	if err != nil {
		return fmt.Errorf("draft %s: %w", id, err)
	}
	if linked, err := message.LinkedFiles(raw); err != nil {
		return err
	} else if len(linked) > 0 {
		if t.may != nil {
			if err := t.may(ctx, auth.Links); err != nil {
				return fmt.Errorf("the draft links to %d Google Drive file(s), shared when it is sent: %w", len(linked), err)
			}
		}
		names, err := d.ShareLinked(ctx, raw, lopts.Share, lopts.Expiry, lopts.Now)
		if err != nil {
			return fmt.Errorf("the draft was not sent: %w", err)
		}
		for _, n := range names {
			fmt.Fprintf(env.Stderr, "carrier send: shared %s on Google Drive with the draft's %s\n", app.Printable(n), map[message.Share]string{message.ShareRecipients: "recipients", message.ShareAnyone: "readers (anyone with the link)"}[lopts.Share])
		}
	}
	body, _ := json.Marshal(map[string]string{"id": id})
	resp, err := apiCall(ctx, t, http.MethodPost, "/gmail/v1/users/me/drafts/send", body)
	if err != nil {
		return err
	}
	writeBody(env.Stdout, resp)
	return nil
}

// apiCall makes one authorized JSON request (internal/gapi: a 401
// refreshed once, the shared read limit) and returns the body of a 2xx
// answer, or the server's refusal.
func apiCall(ctx context.Context, t *target, method, path string, body []byte) ([]byte, error) {
	var out []byte
	err := (&gapi.Client{Root: t.base, Auth: t.auth}).Do(ctx, gapi.Call{Method: method, Path: path, Body: body}, &out)
	return out, err
}

func runTimeline(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "timeline", "--media FILE [--text T | --html-file F] [--notify] [--item ID] [--endpoint URL] [transfer flags]")
	var uf uploadFlags
	uf.add(fs, env.dirs())
	mediaPath := fs.String("media", "", "the picture, video or sound (required)")
	text := fs.String("text", "", "caption")
	htmlFile := fs.String("html-file", "", "HTML caption, from this file")
	notify := fs.Bool("notify", false, "notify the wearer (notification level DEFAULT)")
	item := fs.String("item", "", "add the media to this existing timeline item instead of making a new one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	typ, err := uf.check()
	if err != nil {
		return err
	}
	if *mediaPath == "" {
		return usagef("--media FILE is required")
	}
	if *item != "" && (*text != "" || *htmlFile != "" || *notify) {
		return usagef("--item adds media to an existing item; its caption cannot be changed here")
	}
	tm, err := compose.CheckTimelineMedia(*mediaPath)
	if err != nil {
		return err
	}
	ti := compose.TimelineItem{Media: *mediaPath, Text: *text, Notify: *notify}
	if *htmlFile != "" {
		b, err := readInput(env, *htmlFile)
		if err != nil {
			return fmt.Errorf("--html-file: %w", err)
		}
		ti.HTML = string(b)
	}
	tok, err := uf.givenToken(env)
	if err != nil {
		return err
	}
	t, err := uf.resolve(ctx, tok, auth.Timeline)
	if err != nil {
		return err
	}
	defer t.close()
	captioned := ti.Text != "" || ti.HTML != "" || ti.Notify
	if *item == "" && typ == transfer.Media && captioned {
		return usagef("a caption travels as metadata, which --upload-type media cannot carry: use resumable or multipart")
	}
	up, err := app.Post(tm, ti, *item)
	if err != nil {
		return err
	}
	spec := up.Spec(t.base)
	spec.Type, spec.Path = typ, tm.Path
	if *item == "" {
		_, err = uf.upload(ctx, env, t, spec, nil)
		return err
	}
	// The attachment's answer goes to stdout only as part of the item.
	quiet := *env
	quiet.Stdout = io.Discard
	if _, err := uf.upload(ctx, &quiet, t, spec, nil); err != nil {
		return err
	}
	body, err := apiCall(ctx, t, http.MethodGet, "/mirror/v1/timeline/"+url.PathEscape(*item), nil)
	if err != nil {
		return err
	}
	writeBody(env.Stdout, body)
	return nil
}
