package ui

import (
	"context"
	"errors"
	"fyne.io/fyne/v2/lang"
	"image/color"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/transfer"
)

// A message whose large files go as Drive links is a graph of jobs: each
// file's upload to Drive, then its shares (API calls), then the message,
// which needs all of them (app.Queue.SendWithLinks). The transfers screen
// shows it as one row, the message's: its words say where the whole
// message stands ("Uploading 1 of 2 files to Google Drive", "Sharing the
// files on Google Drive", "Sending", "Sent"), its bar counts the bytes of
// the uploads and of the message together, and under it each file has a
// line with its own bar and what became of its shares. Its buttons act on
// the whole message.

// partRow is one Drive upload under its message's row.
type partRow struct {
	name, amount *widget.Label
	state        *wrapLabel
	bar          *dualBar
	object       fyne.CanvasObject
}

const driveUpload = "/upload/drive/v3/files"

// isPart reports whether a job is by nature a part of a message: an
// upload to Drive, or an API call (a share).
func isPart(s transfer.Snapshot) bool {
	return s.Type == transfer.Call || strings.Contains(s.URL, driveUpload)
}

// top is the job whose row shows id: its message, or itself.
func (s *transfersScreen) top(id string) string {
	if p := s.parent[id]; p != "" {
		return p
	}
	return id
}

// adopt makes the jobs a message needs its parts (their own rows, made
// while the message was not known yet, go), and reports whether id has
// parts. UI thread.
func (s *transfersScreen) adopt(id string, needs []string) bool {
	if len(s.children[id]) == 0 && len(needs) > 0 {
		s.mu.Lock()
		part := isPart(s.views[id].snap)
		s.mu.Unlock()
		if part {
			return false
		}
		s.claim(id, needs)
	}
	return len(s.children[id]) > 0
}

// claim makes parts the parts of msg, as the compose screen learns when it
// queues them: the rows of parts that went ahead of their message go at
// once, not when the message's first event comes. UI thread.
func (s *transfersScreen) claim(msg string, parts []string) {
	if len(parts) == 0 || len(s.children[msg]) > 0 {
		return
	}
	s.children[msg] = append([]string(nil), parts...)
	for _, n := range parts {
		s.parent[n] = msg
		if r := s.rows[n]; r != nil {
			s.box.Remove(r.object)
			delete(s.rows, n)
		}
	}
	s.box.Refresh()
}

// group is a message and its parts as last seen: the Drive uploads in the
// order they were queued, and each upload's shares.
type group struct {
	msg     jobView
	uploads []jobView
	shares  map[string][]jobView // by upload
	all     []transfer.Snapshot  // the message first
}

func (s *transfersScreen) group(id string) group {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := group{shares: map[string][]jobView{}}
	if v := s.views[id]; v != nil {
		g.msg = *v
	}
	g.all = append(g.all, g.msg.snap)
	for _, c := range s.children[id] {
		v := s.views[c]
		if v == nil {
			v = &jobView{snap: transfer.Snapshot{ID: c}}
		}
		g.all = append(g.all, v.snap)
		if v.snap.Type == transfer.Call {
			up := ""
			if len(v.snap.Needs) > 0 {
				up = v.snap.Needs[0]
			}
			g.shares[up] = append(g.shares[up], *v)
			continue
		}
		g.uploads = append(g.uploads, *v)
	}
	sort.SliceStable(g.uploads, func(i, j int) bool { return g.uploads[i].snap.Created.Before(g.uploads[j].snap.Created) })
	return g
}

// drawGroup puts a message with parts into its row (UI thread).
func (s *transfersScreen) drawGroup(r *transferRow, v jobView) {
	g := s.group(r.id)
	msg := g.msg.snap
	setLabel(r.name, jobTitle(msg))
	setLabel(r.dest, whereWords(msg.URL, s.u.deps.Endpoint))
	var total, confirmed, sent int64
	for _, j := range append([]jobView{g.msg}, g.uploads...) {
		total += j.snap.Size
		confirmed += j.snap.Confirmed
		sent += max(j.snap.Sent, j.snap.Confirmed)
	}
	frac := func(n int64) float64 {
		if total <= 0 {
			if msg.State == transfer.StateDone {
				return 1
			}
			return 0
		}
		return float64(n) / float64(total)
	}
	r.bar.Set(frac(confirmed), frac(sent))
	r.bar.name = lang.X("parts.bar", "Progress of the message and its files")
	setLabel(r.state, s.groupWords(g))
	r.state.Importance = widget.MediumImportance
	switch {
	case msg.State == transfer.StateDone:
		r.state.Importance = widget.SuccessImportance
	case anyState(g.all, transfer.StateFailed) && msg.State != transfer.StateCancelled:
		r.state.Importance = widget.DangerImportance
	}
	r.state.Refresh()
	amount := lang.X("row.amount", "{{.Done}} of {{.Size}}", w{"Done": humanSize(confirmed), "Size": humanSize(total)})
	if sent > confirmed {
		amount = lang.X("row.amount.unconfirmed", "{{.Done}} of {{.Size}} ({{.Sent}} sent, not yet confirmed)", w{"Done": humanSize(confirmed), "Size": humanSize(total), "Sent": humanSize(sent - confirmed)})
	}
	setLabel(r.amount, amount)

	if len(r.partRows) != len(g.uploads) {
		r.parts.RemoveAll()
		r.partRows = map[string]*partRow{}
		for _, u := range g.uploads {
			p := newPartRow()
			r.partRows[u.snap.ID] = p
			r.parts.Add(p.object)
		}
		r.parts.Show()
		s.box.Refresh()
	}
	for _, u := range g.uploads {
		s.drawPart(r.partRows[u.snap.ID], u, g.shares[u.snap.ID], isDraft(msg))
	}

	show := func(b *widget.Button, on bool) {
		if on != b.Visible() {
			if on {
				b.Show()
			} else {
				b.Hide()
			}
		}
	}
	var running, paused, failed, mendless bool
	for _, j := range g.all {
		running = running || (j.State.Unfinished() && j.State != transfer.StatePaused)
		paused = paused || j.State == transfer.StatePaused
		failed = failed || j.State == transfer.StateFailed
		mendless = mendless || needsNew(j)
	}
	open := msg.State.Unfinished() || msg.State == transfer.StateFailed
	show(r.pause, open && running)
	show(r.resume, open && paused)
	// Retry is offered only when it can finish the message: a part that
	// would fail the same way (a file changed) needs a new message.
	show(r.retry, open && failed && !mendless)
	show(r.cancel, open)
	show(r.sendAnyway, open && s.u.deps.Limits != nil && heldFiles(g) > 0)
	show(r.reopen, s.canReopen(msg, g.all[1:]...))
}

// heldFiles counts a message's uploads that wait on a metered connection.
func heldFiles(g group) int {
	n := 0
	for _, j := range g.all {
		if heldMetered(j) {
			n++
		}
	}
	return n
}

func newPartRow() *partRow {
	p := &partRow{name: widget.NewLabel(""), amount: widget.NewLabel(""), state: newWrapLabel(""), bar: newDualBar()}
	p.name.Truncation = fyne.TextTruncateEllipsis
	p.state.SizeName = theme.SizeNameCaptionText
	indent := canvas.NewRectangle(color.Transparent)
	indent.SetMinSize(fyne.NewSize(32, 0))
	p.object = mirrorRTL(container.NewBorder(nil, nil, indent, nil, container.NewVBox(
		mirrorRTL(container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()), p.amount, p.name)),
		p.bar,
		p.state,
	)))
	return p
}

// drawPart shows one Drive upload and what became of its shares.
func (s *transfersScreen) drawPart(p *partRow, u jobView, shares []jobView, draft bool) {
	snap := u.snap
	setLabel(p.name, jobTitle(snap))
	p.bar.name = lang.X("parts.bar.file", "Upload of {{.Name}}", w{"Name": jobTitle(snap)})
	if snap.Size > 0 {
		p.bar.Set(float64(snap.Confirmed)/float64(snap.Size), float64(max(snap.Sent, snap.Confirmed))/float64(snap.Size))
	} else if snap.State == transfer.StateDone {
		p.bar.Set(1, 1)
	}
	setLabel(p.amount, lang.X("row.amount", "{{.Done}} of {{.Size}}", w{"Done": humanSize(snap.Confirmed), "Size": humanSize(snap.Size)}))
	setLabel(p.state, s.partWords(u, shares, draft))
	p.state.Importance = widget.MediumImportance
	if snap.State == transfer.StateFailed || anyState(snapsOf(shares), transfer.StateFailed) {
		p.state.Importance = widget.DangerImportance
	}
	p.state.Refresh()
}

// isDraft reports whether a message job saves a draft (drafts.create or
// update): its files are shared when the draft is sent, not before.
func isDraft(msg transfer.Snapshot) bool {
	return strings.Contains(msg.URL, "/drafts") && !strings.HasSuffix(msg.URL, "/send")
}

// partWords say where one file stands: its upload, then its shares.
func (s *transfersScreen) partWords(u jobView, shares []jobView, draft bool) string {
	if u.snap.State != transfer.StateDone {
		return stateWords(u, s.now())
	}
	if gone, ok := s.deleted[u.snap.ID]; ok {
		if gone {
			return lang.X("part.deleted", "Deleted from Google Drive")
		}
		return lang.X("part.kept", "On Google Drive (kept)")
	}
	var with []string
	for _, sh := range shares {
		switch sh.snap.State {
		case transfer.StateDone:
			with = append(with, sharedWith(sh.snap))
		case transfer.StateFailed:
			return lang.X("part.share.failed", "On Google Drive · sharing failed:") + "\n" + failureWords(sh.snap)
		case transfer.StateCancelled:
			return lang.X("part.share.cancelled", "On Google Drive · not shared (cancelled)")
		default:
			return lang.X("part.sharing", "On Google Drive · sharing")
		}
	}
	if len(with) == 0 {
		if draft {
			return lang.X("part.draft", "On Google Drive · shared with nobody until the draft is sent")
		}
		return lang.X("part.ondrive", "On Google Drive")
	}
	return lang.X("part.shared", "On Google Drive · shared with {{.Who}}", w{"Who": app.Printable(strings.Join(with, ", "))})
}

// groupWords say where the whole message stands.
func (s *transfersScreen) groupWords(g group) string {
	msg, now := g.msg, s.now()
	switch msg.snap.State {
	case transfer.StateDone:
		if strings.Contains(msg.snap.URL, "/send") {
			return lang.X("group.sent", "Sent")
		}
		return lang.X("state.done", "Done")
	case transfer.StateCancelled:
		deleted, kept := 0, 0
		for _, u := range g.uploads {
			if gone, ok := s.deleted[u.snap.ID]; ok && gone {
				deleted++
			} else if ok {
				kept++
			}
		}
		switch {
		case deleted > 0:
			return lang.XN("group.cancelled.deleted", "Cancelled · the files deleted from Google Drive", deleted)
		case kept > 0:
			return lang.XN("group.cancelled.kept", "Cancelled · the files kept on Google Drive", kept)
		}
		return lang.X("state.cancelled", "Cancelled")
	case transfer.StateFailed, transfer.StateSignIn:
		return stateWords(msg, now)
	case transfer.StatePaused:
		return lang.X("state.paused", "Paused")
	}
	if n := heldFiles(g); n > 0 {
		return lang.XN("group.held", "{{.Held}}: {{.Count}} large files wait. Send anyway sends them now", n, w{"Held": heldWords(transfer.HeldMetered), "Count": n})
	}
	for _, p := range g.all[1:] {
		switch p.State {
		case transfer.StateFailed:
			return lang.X("group.part.failed", "Waiting: {{.Name}} failed:", w{"Name": jobTitle(p)}) + "\n" + failureWords(p)
		case transfer.StateCancelled:
			return lang.X("group.part.cancelled", "Waiting: {{.Name}} was cancelled. Cancel this message.", w{"Name": jobTitle(p)})
		case transfer.StateSignIn:
			return signInWords(p)
		}
	}
	done, active, paused := 0, -1, false
	var left int64
	var rate float64
	for i, u := range g.uploads {
		switch u.snap.State {
		case transfer.StateDone:
			done++
		case transfer.StatePaused:
			paused = true
		}
		if u.snap.State.Active() {
			if active < 0 {
				active = i
			}
			rate += u.snap.Rate
		}
		left += u.snap.Size - u.snap.Confirmed
	}
	left += msg.snap.Size - msg.snap.Confirmed
	if done < len(g.uploads) {
		if active < 0 && paused {
			return lang.X("state.paused", "Paused")
		}
		if active < 0 && done == 0 {
			return lang.XN("group.queued.drive", "Queued: {{.Count}} files go to Google Drive first, then the message", len(g.uploads), w{"Count": len(g.uploads)})
		}
		words := lang.X("group.uploading.one", "Uploading the file to Google Drive")
		if len(g.uploads) > 1 {
			words = lang.XN("group.uploading", "Uploading {{.N}} of {{.Count}} files to Google Drive", len(g.uploads), w{"N": done + 1, "Count": len(g.uploads)})
		}
		if active >= 0 && g.uploads[active].snap.State == transfer.StateRetrying {
			return words + " · " + stateWords(g.uploads[active], now)
		}
		return words + pace(rate, left)
	}
	for _, sh := range g.shares {
		for _, j := range sh {
			if j.snap.State != transfer.StateDone {
				return lang.XN("group.sharing", "Sharing the files on Google Drive", len(g.uploads))
			}
		}
	}
	switch msg.snap.State {
	case transfer.StateRunning:
		return lang.X("group.sending", "Sending") + pace(msg.snap.Rate, left)
	case transfer.StateRetrying:
		return stateWords(msg, now)
	}
	return lang.X("group.queued", "Queued to send")
}

// pace is " · 5.0 MiB/s · 2 min left", or "" before a rate is known.
func pace(rate float64, left int64) string {
	r := humanRate(rate)
	if r == "" {
		return ""
	}
	words := " · " + r
	if left > 0 {
		words += " · " + lang.X("tray.left", "{{.Time}} left", w{"Time": humanDuration(time.Duration(float64(left) / rate * float64(time.Second)))})
	}
	return words
}

func anyState(snaps []transfer.Snapshot, st transfer.State) bool {
	for _, s := range snaps {
		if s.State == st {
			return true
		}
	}
	return false
}

func snapsOf(vs []jobView) []transfer.Snapshot {
	out := make([]transfer.Snapshot, len(vs))
	for i, v := range vs {
		out[i] = v.snap
	}
	return out
}

// act does what a row's button says, to the row's job and its parts (UI
// thread; the queue is called in the background). Cancelling a message
// stops it first, then its parts; files already on Drive are the person's
// to keep or delete (askDrive).
func (s *transfersScreen) act(id, what string) {
	jobs := append([]string{id}, s.children[id]...)
	ctx := s.u.ctx
	up := s.u.deps.Uploads
	do := map[string]func(string) error{
		"pause":  up.Pause,
		"resume": func(j string) error { return up.Resume(ctx, j) },
		"retry":  func(j string) error { return up.Retry(ctx, j) },
		"cancel": func(j string) error { return up.Cancel(ctx, j) },
		"send anyway": func(j string) error {
			if s.u.deps.Limits == nil {
				return nil
			}
			return s.u.deps.Limits.SendAnyway(j)
		},
	}[what]
	states := map[string]transfer.State{}
	held := map[string]bool{}
	s.mu.Lock()
	for _, j := range jobs {
		if v := s.views[j]; v != nil {
			states[j] = v.snap.State
			held[j] = heldMetered(v.snap)
		}
	}
	s.mu.Unlock()
	s.u.goBackground(func(context.Context) {
		var problem error
		for _, j := range jobs {
			// A job alone gets the command as before; a message's
			// jobs each as it applies, and a part that moved on by
			// itself meanwhile is no problem.
			grouped := len(jobs) > 1
			if grouped && !applies(what, states[j]) || what == "send anyway" && !held[j] {
				continue
			}
			if err := do(j); err != nil && (!grouped || !expected(err)) && problem == nil {
				problem = err
			}
		}
		var files []driveFile
		if what == "cancel" && len(jobs) > 1 {
			files = s.onDrive(jobs[1:])
		}
		s.u.do(func() {
			if problem != nil {
				s.u.showError(lang.X("parts.couldnot.title", "Could not do that"), sprintf("%v", problem))
			}
			if len(files) > 0 {
				s.askDrive(id, files)
			}
		})
	})
}

// applies reports whether a command is for a part in state st.
func applies(what string, st transfer.State) bool {
	switch what {
	case "pause":
		return st.Unfinished() && st != transfer.StatePaused
	case "resume":
		return st == transfer.StatePaused
	case "retry":
		return st == transfer.StateFailed
	}
	return st.Unfinished() || st == transfer.StateFailed
}

// expected are the answers of a part that moved on by itself meanwhile.
func expected(err error) bool {
	for _, e := range []error{transfer.ErrAlreadyDone, transfer.ErrCancelled, transfer.ErrEnded, transfer.ErrAlreadyPaused, transfer.ErrNotPaused, transfer.ErrNotFailed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// driveFile is a file a cancelled message's upload left on Drive.
type driveFile = app.DriveFile

// onDrive are the parts' files that are on Drive: their uploads are done,
// in this run or an earlier one (the journal's history).
func (s *transfersScreen) onDrive(parts []string) []driveFile {
	jobs, err := s.u.deps.Uploads.History()
	if err != nil || len(jobs) == 0 {
		jobs = s.u.deps.Uploads.Jobs()
	}
	return app.FilesOnDrive(jobs, parts)
}

// driveAsk is the question asked after cancelling a message whose files
// are already on Drive: delete them, or keep them there.
type driveAsk struct {
	d            dialog.Dialog
	text         *wrapLabel
	remove, keep *dialogButton
}

func (s *transfersScreen) askDrive(msg string, files []driveFile) {
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	text := lang.X("drive.ask.one", "The message is cancelled. {{.Name}} is already on your Google Drive, where the recipients may open it. Delete it from Drive, or keep it there?", w{"Name": app.Printable(names[0])})
	if len(files) > 1 {
		text = lang.XN("drive.ask", "The message is cancelled. {{.Count}} of its files are already on your Google Drive ({{.Names}}), where the recipients may open them. Delete them from Drive, or keep them there?", len(files), w{"Count": len(files), "Names": app.Printable(strings.Join(names, ", "))})
	}
	a := &driveAsk{text: newWrapLabel(text)}
	settle := func(gone bool) {
		a.d.Hide()
		if s.ask == a {
			s.ask = nil
		}
		if !gone {
			for _, f := range files {
				s.deleted[f.Job] = false
			}
			s.draw(msg)
			return
		}
		setLabel(s.status, lang.X("drive.deleting", "Deleting from Google Drive…"))
		s.u.goBackground(func(ctx context.Context) {
			var failed []string
			var ok []driveFile
			for _, f := range files {
				if err := s.deleteDrive(ctx, f); err != nil {
					failed = append(failed, f.Name+": "+err.Error())
				} else {
					ok = append(ok, f)
				}
			}
			s.u.do(func() {
				for _, f := range ok {
					s.deleted[f.Job] = true
				}
				s.status.SetText("")
				if len(failed) > 0 {
					setLabel(s.status, lang.X("drive.delete.failed", "Could not delete from Google Drive: {{.Error}}", w{"Error": app.Printable(strings.Join(failed, "; "))}))
				}
				s.draw(msg)
			})
		})
	}
	a.remove = newDialogButton(display(lang.X("drive.delete", "Delete from Drive")), theme.DeleteIcon(), func() { settle(true) })
	a.remove.Importance = widget.DangerImportance
	a.keep = newDialogButton(display(lang.X("drive.keep", "Keep on Drive")), theme.ConfirmIcon(), func() { settle(false) })
	content := container.NewVBox(a.text, container.NewHBox(layout.NewSpacer(), a.keep, a.remove))
	a.d = s.u.newDialog(display(lang.X("drive.title", "Files on Google Drive")), content, a.keep)
	a.d.Resize(fyne.NewSize(560, 0))
	s.ask = a
	a.d.Show()
}

// deleteDrive deletes a file from Drive (files.delete) through the queue's
// authorizer, as `carrier cancel --drive delete` does.
func (s *transfersScreen) deleteDrive(ctx context.Context, f driveFile) error {
	_, err := app.DeleteFiles(ctx, s.u.deps.Auth, s.u.deps.Client, []app.DriveFile{f})
	return err
}
