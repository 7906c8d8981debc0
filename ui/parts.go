package ui

import (
	"cmp"
	"context"
	"image/color"
	"slices"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A row of the transfers screen is what a person sent: one delivery
// (internal/delivery), whatever its jobs. A message whose large files go
// as Drive links is its Drive uploads, their shares and the message; a
// batch of pictures is their uploads to Google Photos and the calls that
// make them items. The row's words say where the whole delivery stands,
// from delivery.Status alone ("Uploading 1 of 2 files to Google Drive",
// "Sharing the files on Google Drive", "Sending", "Sent", "Uploading 12
// of 600 files to Google Photos"), its bar counts the bytes of every
// member that carries a file, and under a message each Drive file has a
// line with its own bar and what became of its shares. Each button is a
// verb the delivery's standing allows, and acts on its members as the
// lifecycle table lets each one move.

// partRow is one Drive upload under its message's row.
type partRow struct {
	name, amount *widget.Label
	state        *wrapLabel
	bar          *dualBar
	object       fyne.CanvasObject
}

// isPart reports whether a job, in role r of its delivery, is by nature a
// part of another: an upload to Drive, or an API call (a share, a batch's
// call). The tray counts the others.
func isPart(s transfer.Snapshot, r delivery.Role) bool {
	return s.Type == transfer.Call || r == delivery.RoleDriveFile
}

// guessRole is the role of a job whose delivery is not at hand (the
// tray's words of bare snapshots, a failure's words without its row):
// delivery.RoleOf reads it as it reads a job of a journal from before
// deliveries.
func guessRole(s transfer.Snapshot) delivery.Role { return delivery.RoleOf(nil, s) }

// roleOf is job snap's role in its delivery: the one the screen's stored
// delivery gives its member (delivery.RoleOf, which reads the role of a
// job no stored delivery names yet as Adopt would). Any goroutine, s.mu
// not held.
func (s *transfersScreen) roleOf(snap transfer.Snapshot) delivery.Role {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.owner[snap.ID]
	if !ok {
		id = snap.Owner
	}
	return delivery.RoleOf(s.dels[id], snap)
}

// roles is roleOf for many jobs at once (the tray's, a camera roll's
// 20,000 each asked in turn): the roles the stored deliveries give their
// members, read once; guessRole for a job none of them names. Any
// goroutine, s.mu not held.
func (s *transfersScreen) roles() func(transfer.Snapshot) delivery.Role {
	s.mu.Lock()
	known := make(map[string]delivery.Role, len(s.owner))
	for _, d := range s.dels {
		for _, m := range d.Members {
			known[m.Job] = m.Role
		}
	}
	s.mu.Unlock()
	return func(snap transfer.Snapshot) delivery.Role {
		if r := known[snap.ID]; r != "" {
			return r
		}
		return guessRole(snap)
	}
}

// setDeliveries makes ds the screen's deliveries (s.mu held): each job's
// delivery is known by its id, and the rows are matched to them on the UI
// thread (syncRows).
func (s *transfersScreen) setDeliveries(ds []delivery.Delivery) {
	s.dels = make(map[string]*delivery.Delivery, len(ds))
	s.owner = map[string]string{}
	s.order = s.order[:0]
	for i := range ds {
		s.addDelivery(ds[i])
	}
	s.regrouped = true
}

// addDelivery adds d to the screen's deliveries (s.mu held).
func (s *transfersScreen) addDelivery(d delivery.Delivery) {
	if _, ok := s.dels[d.ID]; !ok {
		s.order = append(s.order, d.ID)
	}
	s.dels[d.ID] = &d
	for _, m := range d.Members {
		s.owner[m.Job] = d.ID
	}
	s.regrouped = true
}

// join finds the delivery of the job snap is of (s.mu held): the one it
// is known in, or its owner's, which it joins. False when its delivery is
// not known yet: the deliveries are to be read again (reread).
func (s *transfersScreen) join(snap transfer.Snapshot) bool {
	if _, ok := s.owner[snap.ID]; ok {
		return true
	}
	d := s.dels[snap.Owner]
	if snap.Owner == "" || d == nil {
		return false
	}
	d.Members = append(d.Members, delivery.MemberIn(d, snap))
	s.owner[snap.ID] = d.ID
	s.regrouped = true
	return true
}

// reread reads the deliveries again, for a job none of the known ones
// holds (a delivery just made, or a message that joins its files), or
// (snap empty) for what the app stored of them since: any goroutine but
// the UI thread. Jobs seen but in none of them (queued after the read)
// are grouped as delivery.Of groups them.
func (s *transfersScreen) reread(snap transfer.Snapshot) {
	ds, err := s.u.deps.Uploads.Deliveries()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil || len(ds) > 0 {
		s.setDeliveries(ds)
	}
	// The jobs seen since the journal was read (another delivery's,
	// queued meanwhile) keep theirs, grouped as the journal would be.
	if v := s.views[snap.ID]; snap.URL != "" && (v == nil || v.snap.Seq < snap.Seq) {
		s.views[snap.ID] = &jobView{snap: snap}
	}
	var left []transfer.Snapshot
	for id, v := range s.views {
		if _, ok := s.owner[id]; !ok && v.snap.URL != "" {
			left = append(left, v.snap)
		}
	}
	for _, d := range delivery.Of(left, nil) {
		s.addDelivery(d)
	}
}

// deliveryOf is the id of the delivery whose row shows id: a delivery's
// id, or a job's (the compose screen knows the jobs it queued).
func (s *transfersScreen) deliveryOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dels[id]; ok {
		return id
	}
	return s.owner[id]
}

// rowOf is the row that shows job (UI thread).
func (s *transfersScreen) rowOf(job string) *transferRow { return s.rows[s.deliveryOf(job)] }

// claim tells the screen that the compose screen queued msg and the parts
// it needs: one delivery, whose rows made while the message was not
// known yet go at once, not when the message's first event comes. UI
// thread; the deliveries are read in the background.
func (s *transfersScreen) claim(msg string, parts []string) {
	if len(parts) == 0 {
		return
	}
	s.u.goBackground(func(context.Context) {
		s.reread(transfer.Snapshot{ID: msg})
		s.u.do(s.syncRows)
	})
}

// syncRows matches the rows to the deliveries after they changed: a row
// for each new delivery, newest first, none for one that went (its jobs
// joined another), and the rows whose members changed drawn again (UI
// thread).
func (s *transfersScreen) syncRows() {
	s.mu.Lock()
	if !s.regrouped {
		s.mu.Unlock()
		return
	}
	s.regrouped = false
	order := slices.Clone(s.order)
	members := make(map[string]int, len(order))
	for _, id := range order {
		members[id] = len(s.dels[id].Members)
	}
	s.mu.Unlock()
	changed := false
	for id, r := range s.rows {
		if _, ok := members[id]; !ok {
			s.box.Remove(r.object)
			delete(s.rows, id)
			changed = true
		}
	}
	for _, id := range order {
		switch r := s.rows[id]; {
		case r == nil:
			s.makeRow(id)
		case r.members != members[id]:
			s.draw(id)
		}
	}
	if changed {
		if len(s.rows) == 0 {
			s.box.Objects = []fyne.CanvasObject{s.empty}
		}
		s.box.Refresh()
	}
}

// rowData is a delivery as its row draws it: its members' views, and
// where it stands. A camera roll's batch has 20,400 members and is drawn
// again as its uploads move, so its views are copied once a drawing, in
// one slice, and the lists by role are places in it, made once (issue
// 29: copies of every view for each of the row's words made a drawing
// of such a batch cost 270 MB and 313 ms).
type rowData struct {
	d     delivery.Delivery
	list  []jobView               // the members' views, in d.Members' order
	seen  []bool                  // whether list[i] is a view an event gave, not an empty one
	at    map[string]int          // a member's place in list
	roles map[delivery.Role][]int // places of each role's members, in the order they were queued
	st    delivery.Standing
	// look is the look at a changed file a drawing took (looked), which
	// its words and buttons share.
	look   *changedCheck
	looked bool
}

// data reads delivery id and its members' views (nil when the delivery
// is not known). Any goroutine.
func (s *transfersScreen) data(id string) *rowData {
	s.mu.Lock()
	dp := s.dels[id]
	if dp == nil {
		s.mu.Unlock()
		return nil
	}
	d := *dp
	d.Members = slices.Clone(dp.Members)
	rd := newRowData(d, func(job string) *jobView { return s.views[job] })
	s.mu.Unlock()
	rd.stand()
	return rd
}

// newRowData is d with a copy of each member's view (view: nil when no
// event of it was seen); stand says where it stands.
func newRowData(d delivery.Delivery, view func(job string) *jobView) *rowData {
	n := len(d.Members)
	rd := &rowData{d: d, list: make([]jobView, n), seen: make([]bool, n), at: make(map[string]int, n), roles: map[delivery.Role][]int{}}
	for i, m := range d.Members {
		if v := view(m.Job); v != nil {
			rd.list[i], rd.seen[i] = *v, true
		} else {
			rd.list[i].snap.ID = m.Job
		}
		rd.at[m.Job] = i
		rd.roles[m.Role] = append(rd.roles[m.Role], i)
	}
	for _, places := range rd.roles {
		rd.inQueueOrder(places)
	}
	return rd
}

// stand reads where the delivery stands from its members' views.
func (rd *rowData) stand() {
	rd.st = delivery.StatusOf(rd.d, func(job string) *transfer.Snapshot {
		if i, ok := rd.at[job]; ok && rd.seen[i] {
			return &rd.list[i].snap
		}
		return nil
	})
}

// inQueueOrder orders places by when their jobs were queued; members are
// kept in that order already, so it is a look, and a sort only when not.
func (rd *rowData) inQueueOrder(places []int) {
	before := func(a, b int) bool { return rd.list[a].snap.Created.Before(rd.list[b].snap.Created) }
	for k := 1; k < len(places); k++ {
		if before(places[k], places[k-1]) {
			sort.SliceStable(places, func(i, j int) bool { return before(places[i], places[j]) })
			return
		}
	}
}

// view is member job's view (an empty one named by its id when no event
// of it was seen).
func (rd *rowData) view(job string) jobView {
	if i, ok := rd.at[job]; ok {
		return rd.list[i]
	}
	return jobView{snap: transfer.Snapshot{ID: job}}
}

// snaps are the members' snapshots by job, those an event gave (what
// delivery.Status reads).
func (rd *rowData) snaps() map[string]transfer.Snapshot {
	out := make(map[string]transfer.Snapshot, len(rd.list))
	for i, v := range rd.list {
		if rd.seen[i] {
			out[v.snap.ID] = v.snap
		}
	}
	return out
}

// lone reports whether the delivery is one job: its row says what that
// job says (its pace, its retries, how it was verified).
func (rd *rowData) lone() bool { return len(rd.d.Members) == 1 }

// head is the member the row is named after: the message, or the first.
func (rd *rowData) head() (delivery.Member, transfer.Snapshot) {
	if places := rd.roles[delivery.RoleMessage]; len(places) > 0 {
		i := slices.Min(places) // the first in the delivery's order
		return rd.d.Members[i], rd.list[i].snap
	}
	if len(rd.d.Members) == 0 {
		return delivery.Member{}, transfer.Snapshot{}
	}
	return rd.d.Members[0], rd.list[0].snap
}

// count is how many members are in roles.
func (rd *rowData) count(roles ...delivery.Role) int {
	n := 0
	for _, r := range roles {
		n += len(rd.roles[r])
	}
	return n
}

// pictures is how many files a Photos batch sends: those it said, while
// it is still being queued, else its pictures' members.
func (rd *rowData) pictures() int {
	return max(rd.count(delivery.RolePhoto), rd.d.Files)
}

// each gives fn the members in roles, in the order they were queued,
// without copying them; fn returns false to stop.
func (rd *rowData) each(fn func(v *jobView) bool, roles ...delivery.Role) {
	var places []int
	if len(roles) == 1 {
		places = rd.roles[roles[0]]
	} else {
		for _, r := range roles {
			places = append(places, rd.roles[r]...)
		}
		sort.Ints(places)
		rd.inQueueOrder(places)
	}
	for _, i := range places {
		if !fn(&rd.list[i]) {
			return
		}
	}
}

// with are the members in roles, in the order they were queued: for the
// few (a message's Drive files, their shares); count and each for the
// many.
func (rd *rowData) with(roles ...delivery.Role) []jobView {
	out := make([]jobView, 0, rd.count(roles...))
	rd.each(func(v *jobView) bool { out = append(out, *v); return true }, roles...)
	return out
}

// fileRoles are the roles of the members that carry a person's file
// (their bytes are the bar's).
var fileRoles = []delivery.Role{delivery.RoleMessage, delivery.RoleDriveFile, delivery.RolePhoto, delivery.RoleUpload}

// mail reports whether the delivery is a message or a draft.
func (rd *rowData) mail() bool {
	return rd.d.Kind == delivery.KindMessage || rd.d.Kind == delivery.KindDraft
}

// title is the row's name: a batch's count of pictures and its album, or
// its head job's name.
func (rd *rowData) title() string {
	if rd.d.Kind == delivery.KindPhotos && !rd.lone() {
		n := rd.pictures()
		if album := cmp.Or(rd.d.Album, batchAlbum(rd.d.Label)); album != "" {
			return lang.XN("delivery.photos.album", "{{.Count}} files into {{.Album}} · Google Photos", n, w{"Count": groupCount(n), "Album": app.Printable(album)})
		}
		return lang.XN("delivery.photos", "{{.Count}} files · to Google Photos", n, w{"Count": groupCount(n)})
	}
	m, snap := rd.head()
	return jobTitle(snap, m.Role)
}

// draw puts a delivery into its row (UI thread). id may be a job's: the
// row of its delivery is drawn.
func (s *transfersScreen) draw(id string) {
	did := s.deliveryOf(id)
	r := s.rows[did]
	if r == nil {
		return
	}
	s.draws++
	rd := s.data(did)
	if rd == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	for _, m := range rd.d.Members {
		if v := s.views[m.Job]; v != nil {
			v.lastDrawn = now
		}
	}
	s.mu.Unlock()
	r.members = len(rd.d.Members)
	st := rd.st
	head, hsnap := rd.head()
	setLabel(r.name, rd.title())
	setLabel(r.dest, whereWords(hsnap.URL, s.u.deps.Endpoint)+accountNote(hsnap))
	var sent int64
	rd.each(func(f *jobView) bool {
		if f.snap.State == transfer.StateDone {
			sent += f.snap.Size
		} else {
			sent += min(max(f.snap.Sent, f.snap.Confirmed), f.snap.Size)
		}
		return true
	}, fileRoles...)
	ended := st.Phase == delivery.PhaseSent || st.Phase == delivery.PhaseSaved || st.Phase == delivery.PhaseDone
	frac := func(n int64) float64 {
		if st.Size <= 0 {
			if ended {
				return 1
			}
			return 0
		}
		return float64(n) / float64(st.Size)
	}
	r.bar.Set(frac(st.Confirmed), frac(sent))
	if !rd.lone() {
		r.bar.name = lang.X("parts.bar", "Progress of the message and its files")
	}
	// The look at a changed file is taken once for the whole drawing: its
	// words and its buttons (Use this file) say the same look, even when
	// it ends while the row is drawn.
	rd.look, rd.looked = s.changedLook(rd), true
	setLabel(r.state, s.phaseWords(rd))
	r.state.Importance = widget.MediumImportance
	switch {
	case st.Phase == delivery.PhaseFailed:
		r.state.Importance = widget.DangerImportance
	case ended:
		r.state.Importance = widget.SuccessImportance
	}
	r.state.Refresh()
	amount := lang.X("row.amount", "{{.Done}} of {{.Size}}", w{"Done": humanSize(st.Confirmed), "Size": humanSize(st.Size)})
	if sent > st.Confirmed {
		amount = lang.X("row.amount.unconfirmed", "{{.Done}} of {{.Size}} ({{.Sent}} sent, not yet confirmed)", w{"Done": humanSize(st.Confirmed), "Size": humanSize(st.Size), "Sent": humanSize(sent - st.Confirmed)})
	}
	setLabel(r.amount, amount)

	// Under a message, a line for each of its Drive files.
	var uploads []jobView
	if rd.mail() {
		uploads = rd.with(delivery.RoleDriveFile)
	}
	if len(r.partRows) != len(uploads) {
		r.parts.RemoveAll()
		r.partRows = map[string]*partRow{}
		for _, u := range uploads {
			p := newPartRow()
			r.partRows[u.snap.ID] = p
			r.parts.Add(p.object)
		}
		if len(uploads) > 0 {
			r.parts.Show()
		} else {
			r.parts.Hide()
		}
		s.box.Refresh()
	}
	shares := map[string][]jobView{}
	for _, sh := range rd.with(delivery.RoleDriveShare) {
		if len(sh.snap.Needs) > 0 {
			shares[sh.snap.Needs[0]] = append(shares[sh.snap.Needs[0]], sh)
		}
	}
	for _, u := range uploads {
		s.drawPart(r.partRows[u.snap.ID], u, shares[u.snap.ID], rd.d.Kind == delivery.KindDraft)
	}

	show := func(b fyne.CanvasObject, on bool) {
		if on != b.Visible() {
			if on {
				b.Show()
			} else {
				b.Hide()
			}
		}
	}
	if st.Phase == delivery.PhaseQuotaWait && s.u.timeline != nil {
		// The row says the batch goes on by itself at the reset: the
		// window's wait sends it on then (one waiter per reset), whether
		// or not Media shows the batch.
		s.u.timeline.expectQuota(st.Reset)
	}
	show(r.pause, st.Can(delivery.VerbPause))
	show(r.resume, st.Can(delivery.VerbResume))
	show(r.retry, st.Can(delivery.VerbRetry))
	look := rd.look
	show(r.locate, st.Can(delivery.VerbLocate) && s.locator() != nil || look != nil && !look.same)
	show(r.useFile, look != nil && look.same)
	show(r.cancel, st.Can(delivery.VerbCancel))
	show(r.sendAnyway, s.u.deps.Limits != nil && (st.Can(delivery.VerbSendAnyway) || rd.heldMetered() > 0))
	show(r.reopen, head.Role == delivery.RoleMessage && s.canReopen(rd, head.Job))
	left := undoLeft(st, now)
	show(r.undo, left > 0 && s.u.deps.Keeper != nil)
	later := left > countFrom && s.u.deps.Keeper != nil && rd.count(delivery.RoleDriveFile) == 0
	show(r.sendNow, later)
	show(r.retime, later)
	// Sent later, Undo takes the message back to Compose to change it
	// (its time, or to send it now): the message's Date is its time.
	if label := undoLabel(left); r.undo.Text != label {
		r.undo.SetText(label)
	}
	s.countDown(r, left)
}

// heldMetered counts the members that wait only for a metered connection.
func (rd *rowData) heldMetered() int {
	n := 0
	for i := range rd.list {
		if heldMetered(rd.list[i].snap) {
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
	name := jobTitle(snap, delivery.RoleDriveFile)
	setLabel(p.name, name)
	p.bar.name = lang.X("parts.bar.file", "Upload of {{.Name}}", w{"Name": name})
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

// partWords say where one file stands: its upload, then its shares. A
// failure is the row's to say (once, for the whole message): here it is
// only named.
func (s *transfersScreen) partWords(u jobView, shares []jobView, draft bool) string {
	switch u.snap.State {
	case transfer.StateFailed:
		return lang.X("part.failed", "Failed")
	case transfer.StateDone:
	default:
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
			return lang.X("part.share.failed", "On Google Drive · sharing failed")
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

// phaseWords say where the whole delivery stands, from its phase (the
// delivery's standing); a delivery of one job says what that job says.
func (s *transfersScreen) phaseWords(rd *rowData) string {
	st, now := rd.st, s.now()
	var only jobView
	if rd.lone() {
		only = rd.view(rd.d.Members[0].Job)
	}
	if left := undoLeft(st, now); left > 0 && st.Phase == delivery.PhaseScheduled {
		return undoWords(left, st.SendAt, st.UploadFrom)
	}
	switch st.Phase {
	case delivery.PhaseScheduled:
		return lang.X("group.sending", "Sending")
	case delivery.PhaseFailed:
		v := rd.view(st.Member.Job)
		words := s.changedFailureWords(rd, v.snap)
		if words == "" {
			words = failureWordsAs(v.snap, st.Member.Role)
		}
		if rd.lone() || st.Member.Role == delivery.RoleMessage {
			return words
		}
		return lang.X("delivery.member.failed", "{{.Name}} failed:", w{"Name": jobTitle(v.snap, st.Member.Role)}) + "\n" + words
	case delivery.PhaseSignIn:
		return signInWords(rd.view(st.Member.Job).snap)
	case delivery.PhaseMissing:
		v := rd.view(st.Member.Job)
		if rd.lone() {
			return missingWords(v.snap)
		}
		return lang.X("delivery.missing", "Waiting: {{.Name}} is no longer at {{.Path}}. If you moved it, press Locate… and choose it where it is now.",
			w{"Name": jobTitle(v.snap, st.Member.Role), "Path": app.Printable(v.snap.Path)})
	case delivery.PhaseBlocked:
		if rd.lone() {
			return stateWords(only, now)
		}
		name := jobTitle(rd.view(st.Member.Job).snap, st.Member.Role)
		if rd.mail() {
			return lang.X("group.part.cancelled", "Waiting: {{.Name}} was cancelled. Cancel this message.", w{"Name": name})
		}
		return lang.X("delivery.blocked", "Waiting: {{.Name}} was cancelled. Cancel the rest.", w{"Name": name})
	case delivery.PhaseCancelled:
		deleted, kept := 0, 0
		for _, u := range rd.with(delivery.RoleDriveFile) {
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
	case delivery.PhasePaused:
		return lang.X("state.paused", "Paused")
	case delivery.PhaseQuotaWait:
		return lang.X("delivery.quota", "Waiting: Google Photos' quota for today is used up. It resets at {{.Time}}; the batch goes on by itself then.", w{"Time": st.Reset.Local().Format("15:04")})
	case delivery.PhaseHeld:
		if rd.lone() {
			return stateWords(only, now)
		}
		if n := rd.heldMetered(); n > 0 {
			return lang.XN("group.held", "{{.Held}}: {{.Count}} large files wait. Send anyway sends them now", n, w{"Held": heldWords(transfer.HeldMetered), "Count": groupCount(n)})
		}
		return heldWords(st.Held)
	case delivery.PhaseSent:
		// A message that went says so, alone or with its links: "Done"
		// told a person nothing of whether it left (issue 32); one sent
		// later than its time (Send later, Undo send) says when and why.
		_, msg := rd.head()
		if late := app.Lateness(msg.SendAt, msg.Updated); late > 0 {
			return lang.X("later.late", "Sent at {{.Time}}, {{.Minutes}} min after its time ({{.At}}): the computer was asleep, offline or still uploading then",
				w{"Time": msg.Updated.Local().Format("15:04"), "Minutes": int(late / time.Minute), "At": msg.SendAt.Local().Format("15:04")})
		}
		return lang.X("group.sent", "Sent")
	case delivery.PhaseSaved:
		return lang.X("delivery.saved", "Saved as a draft")
	case delivery.PhaseDone:
		if rd.lone() {
			return stateWords(only, now)
		}
		if rd.d.Kind == delivery.KindPhotos {
			n := rd.count(delivery.RolePhoto)
			return lang.XN("delivery.photos.done", "Done: all {{.Count}} files are in Google Photos", n, w{"Count": groupCount(n)})
		}
		return lang.X("state.done", "Done")
	case delivery.PhaseQueued:
		if rd.lone() {
			return stateWords(only, now)
		}
		switch rd.d.Kind {
		case delivery.KindMessage, delivery.KindDraft:
			if n := rd.count(delivery.RoleDriveFile); n > 0 {
				return lang.XN("group.queued.drive", "Queued: {{.Count}} files go to Google Drive first, then the message", n, w{"Count": groupCount(n)})
			}
			return lang.X("group.queued", "Queued to send")
		case delivery.KindPhotos:
			n := rd.pictures()
			return lang.XN("delivery.queued.photos", "Queued: {{.Count}} files go to Google Photos", n, w{"Count": groupCount(n)})
		}
		return lang.X("state.queued", "Queued")
	case delivery.PhaseUploading:
		if rd.lone() {
			return stateWords(only, now)
		}
		var words string
		n := min(st.Done+1, st.Total)
		switch st.Destination {
		case delivery.KindDriveUpload:
			words = lang.X("group.uploading.one", "Uploading the file to Google Drive")
			if st.Total > 1 {
				words = lang.XN("group.uploading", "Uploading {{.N}} of {{.Count}} files to Google Drive", st.Total, w{"N": groupCount(n), "Count": groupCount(st.Total)})
			}
		case delivery.KindPhotosUpload:
			words = lang.XN("delivery.uploading.photos", "Uploading {{.N}} of {{.Count}} files to Google Photos", st.Total, w{"N": groupCount(n), "Count": groupCount(st.Total)})
		default:
			words = lang.XN("delivery.uploading", "Uploading {{.N}} of {{.Count}} files", st.Total, w{"N": groupCount(n), "Count": groupCount(st.Total)})
		}
		return words + s.going(rd)
	case delivery.PhaseSharing:
		n := rd.count(delivery.RoleDriveFile)
		return lang.XN("group.sharing", "Sharing the files on Google Drive", n)
	case delivery.PhaseSending, delivery.PhaseSaving:
		if rd.lone() {
			return stateWords(only, now)
		}
		_, msg := rd.head()
		switch msg.State {
		case transfer.StateRunning:
			return lang.X("group.sending", "Sending") + pace(msg.Rate, msg.Size-msg.Confirmed)
		case transfer.StateRetrying:
			return stateWords(rd.view(msg.ID), now)
		}
		return lang.X("group.queued", "Queued to send")
	case delivery.PhasePosting:
		n := rd.count(delivery.RolePhoto)
		return lang.XN("delivery.posting", "Posting {{.Count}} files to Google Photos: making their items", n, w{"Count": groupCount(n)})
	}
	return ""
}

// going is how the files going up move: a retry's words when the first
// of them waits to try again, else the pace of them all.
func (s *transfersScreen) going(rd *rowData) string {
	var rate float64
	var retrying *jobView
	rd.each(func(f *jobView) bool {
		if f.snap.State == transfer.StateRetrying {
			retrying = f
			return false
		}
		if f.snap.State.Active() {
			rate += f.snap.Rate
		}
		return true
	}, fileRoles...)
	if retrying != nil {
		return " · " + stateWords(*retrying, s.now())
	}
	return pace(rate, rd.st.Size-rd.st.Confirmed)
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

// act does a row's verb to its delivery (UI thread; the queue is called
// in the background) through the app's one service for both front ends
// (app.Acting.Act: which members move, the message first for a cancel, is
// delivery.Targets'), as the row shows its members now. Files a cancelled
// message already put on Drive are the person's to keep or delete
// (askDrive).
func (s *transfersScreen) act(id string, verb delivery.Verb) {
	rd := s.data(s.deliveryOf(id))
	if rd == nil || !delivery.Moves(verb) {
		return
	}
	snaps := rd.snaps()
	acting := app.Acting{Jobs: s.u.deps.Uploads}
	if s.u.deps.Limits != nil {
		acting.SendAnyway = s.u.deps.Limits.SendAnyway
	}
	s.u.goBackground(func(context.Context) {
		acted, err := acting.Act(s.u.ctx, rd.d, snaps, verb)
		s.u.do(func() {
			if err != nil {
				s.u.showError(lang.X("parts.couldnot.title", "Could not do that"), sprintf("%v", firstOf(err)))
			}
			if len(acted.OnDrive) > 0 {
				s.askDrive(rd.d.ID, acted.OnDrive)
			}
		})
	})
}

// actEach does verb, through the app's service, to the delivery of each
// job the queue holds that want picks, once a delivery (actOn). What
// could not move is not said: the tray's Pause all and Resume all leave
// the rows to show where each stands.
func (s *transfersScreen) actEach(ctx context.Context, verb delivery.Verb, want func(transfer.Snapshot) bool) {
	jobs := s.u.deps.Uploads.Jobs()
	now := delivery.ByJob(jobs)
	done := map[string]bool{}
	for _, j := range jobs {
		if !want(j) {
			continue
		}
		if id := s.deliveryOf(j.ID); id != "" {
			if done[id] {
				continue
			}
			done[id] = true
		}
		s.actOn(ctx, j.ID, verb, now)
	}
}

// actOn does verb, through the app's service, to the delivery job
// belongs to, its members standing as now (the queue's jobs, by id) or
// else their rows say; a job whose delivery the screen does not know yet
// gets the verb alone. Any goroutine; the error is the service's.
func (s *transfersScreen) actOn(ctx context.Context, job string, verb delivery.Verb, now map[string]transfer.Snapshot) error {
	d := delivery.Delivery{ID: job, Members: []delivery.Member{{Job: job}}}
	var views map[string]transfer.Snapshot
	if rd := s.data(s.deliveryOf(job)); rd != nil {
		d, views = rd.d, rd.snaps()
	}
	snaps := make(map[string]transfer.Snapshot, len(d.Members))
	for _, m := range d.Members {
		if j, ok := now[m.Job]; ok {
			snaps[m.Job] = j
		} else if v, ok := views[m.Job]; ok {
			snaps[m.Job] = v
		}
	}
	_, err := app.Acting{Jobs: s.u.deps.Uploads}.Act(ctx, d, snaps, verb)
	return err
}

// firstOf is the first of the errors joined in err: the one a dialog
// names.
func firstOf(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

// driveFile is a file a cancelled message's upload left on Drive.
type driveFile = app.DriveFile

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
