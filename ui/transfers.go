package ui

import (
	"context"
	"fyne.io/fyne/v2/lang"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// rowRate caps how often one row's widgets are refreshed: about 15 times
// a second is smooth to the eye and keeps the UI thread free.
const rowRate = time.Second / 15

// jobView is what a row shows: a fold of the job's events, each carrying
// the job's snapshot, plus what the last retry said.
type jobView struct {
	snap        transfer.Snapshot
	retryAt     time.Time
	retryReason string
	retryStatus int // the HTTP status that failed; 0: no answer came
	attempt     int
	woke        bool
	held        bool // the system holds uploads (asleep, offline): retryReason says why
	lastDrawn   time.Time
	dirty       bool
}

type transfersScreen struct {
	u  *UI
	mu sync.Mutex // guards views; widgets are touched on the UI thread only

	lastBurst time.Time    // when applyBurst last drew (its goroutine only)
	flushes   atomic.Int64 // rows drawn for events (flush), for the tests
	drawCost  atomic.Int64 // how long the last drawing took on the UI thread (ns)
	drawnAt   atomic.Int64 // when it ended (Unix ns)
	views     map[string]*jobView
	rows      map[string]*transferRow
	box       *fyne.Container // the rows, newest first (paged's Box)
	paged     *pagedList
	empty     *widget.Label
	content   fyne.CanvasObject
	now       func() time.Time
	draws     int         // rows drawn, for the throttle's test
	ticking   atomic.Bool // the redraw ticker runs: only while a job moves
	status    *wrapLabel
	clear     *focusButton
	network   *networkSettings // nil when the queue takes no settings

	// A row is a delivery (parts.go): what the person sent, with all its
	// jobs. These are guarded by mu.
	dels      map[string]*delivery.Delivery // by id
	owner     map[string]string             // job → the id of its delivery
	order     []string                      // the deliveries' ids, oldest first
	regrouped bool                          // the deliveries changed: the rows are to be matched (syncRows)
	told      map[string]delivery.Phase     // the phase each delivery's notification said (sent, done, failed)

	// Touched on the UI thread only.
	deleted map[string]bool // Drive uploads whose file was deleted after a cancel
	ask     *driveAsk       // the open question about a cancelled message's Drive files

	cancelling *cancelAsk // the open question before a cancel (reopen.go)

	// checks are the looks at the files of uploads stopped because they
	// changed, by job (usefile.go); guarded by mu.
	checks map[string]*changedCheck

	// pickLocated asks where a ghost's file is now (locate.go); nil is
	// the file dialog. Tests stand in for the person's choice.
	pickLocated func(was string, chosen func(path string))
}

type transferRow struct {
	id                           string
	name, dest, amount           *widget.Label
	state                        *wrapLabel
	bar                          *dualBar
	pause, resume, cancel, retry *focusButton
	sendAnyway                   *focusButton    // a large upload held on a metered connection
	reopen                       *focusButton    // a cancelled or failed message, back into Compose
	undo                         *focusButton    // a message held for its undo window: cancel it and reopen it
	sendNow, retime              *focusButton    // a message sent later: made again now, or at another time (undo.go)
	locate                       *focusButton    // a file no longer where it was: point at it again (locate.go)
	useFile                      *focusButton    // a file changed but holding the bytes sent: take it as it is (usefile.go)
	countdown                    bool            // a redraw for the undo window's next second is due (undo.go)
	parts                        *fyne.Container // the part rows, under the message's own
	partRows                     map[string]*partRow
	members                      int // the delivery's members when last drawn
	object                       fyne.CanvasObject
}

func newTransfersScreen(u *UI) *transfersScreen {
	s := &transfersScreen{u: u, views: map[string]*jobView{}, rows: map[string]*transferRow{}, now: time.Now,
		dels: map[string]*delivery.Delivery{}, owner: map[string]string{}, told: map[string]delivery.Phase{}, deleted: map[string]bool{}}
	s.paged = newPagedList("upload")
	s.box = s.paged.Box
	s.empty = newLabel(lang.X("transfers.empty", "No uploads yet. Messages you send and pictures you post appear here."))
	s.box.Add(s.empty)
	s.status = newWrapLabel("")
	s.clear = newFocusButton(lang.X("transfers.clear", "Clear finished"), theme.DeleteIcon(), s.clearFinished)
	top := container.NewVBox(mirrorRTL(container.NewBorder(nil, nil, nil, s.clear, italic(lang.X("transfers.intro", "Uploads survive lost connections, sleep and restarts: each one resumes where the server says it stands.")))))
	if u.deps.Limits != nil {
		s.network = newNetworkSettings(u)
		top.Add(s.network.Object)
	}
	s.content = container.NewBorder(top, s.status, nil, nil, s.paged.Object)
	return s
}

// start shows the journal's jobs and follows the queue's events.
func (s *transfersScreen) start() {
	snaps, err := s.u.deps.Uploads.History()
	if err != nil {
		setLabel(s.status, lang.X("transfers.journal.bad", "Some uploads of the journal could not be read: {{.Error}}", w{"Error": windowText(err.Error())}))
	}
	s.mu.Lock()
	for _, r := range snaps {
		s.views[r.ID] = &jobView{snap: r}
	}
	s.mu.Unlock()
	ds, derr := s.u.deps.Uploads.Deliveries()
	if derr != nil && len(ds) == 0 {
		ds = delivery.Of(snaps, nil)
	}
	if derr != nil && err == nil {
		setLabel(s.status, lang.X("transfers.journal.bad", "Some uploads of the journal could not be read: {{.Error}}", w{"Error": windowText(derr.Error())}))
	}
	s.mu.Lock()
	s.setDeliveries(ds)
	s.mu.Unlock()
	s.syncRows()
	if s.u.deps.Events != nil {
		s.u.goBackground(s.follow)
	}
}

// follow applies events to the views; rows are redrawn on the UI thread,
// at most rowRate often for progress. The ticker runs only while a job is
// running or retrying: at rest, nothing wakes.
func (s *transfersScreen) follow(ctx context.Context) {
	var tick *time.Ticker
	var ticks <-chan time.Time
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		switch moving := s.moving(); {
		case moving && tick == nil:
			tick = time.NewTicker(rowRate)
			ticks = tick.C
		case !moving && tick != nil:
			tick.Stop()
			tick, ticks = nil, nil
			s.flushDirty() // the last progress
			s.trayChanged(true)
		}
		s.ticking.Store(tick != nil)
		select {
		case <-ctx.Done():
			return
		case e := <-s.u.deps.Events:
			s.applyBurst(e)
		case <-ticks:
			s.tick()
			s.trayChanged(false)
		}
	}
}

// moving reports whether a job is running or retrying, so its row changes
// by itself (rate, countdown).
func (s *transfersScreen) moving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.views {
		if v.snap.State.Active() {
			return true
		}
	}
	return false
}

// timed records a drawing begun at start (UI thread): rest is then
// three times what it took.
func (s *transfersScreen) timed(start time.Time) {
	now := time.Now()
	s.drawCost.Store(int64(now.Sub(start)))
	s.drawnAt.Store(now.UnixNano())
}

// rest is how long the rows are left alone after a drawing: three times
// what the last one took, so that drawing keeps the UI thread at most a
// quarter of the time. A row of a camera roll's 20,000 members takes a
// good part of a second to draw, and the ticks asked for it 15 times a
// second (the window showed the posted batch only after 3 min 47 s).
func (s *transfersScreen) rest() time.Duration {
	return 3 * time.Duration(s.drawCost.Load())
}

// burstGap is the least time between two bursts' drawings: events that
// come closer than that are folded together (applyBurst).
const burstGap = 200 * time.Millisecond

// burstMax bounds how many waiting events one pass of applyBurst folds
// before the rows are drawn, so a long burst still shows its progress.
const burstMax = 512

// applyBurst folds e and the events already waiting behind it (at most
// burstMax), then draws each delivery they changed once, tells of each
// that ended once, and updates the tray once. Drawing a row reads all of
// its delivery's members, so a Photos batch whose 600 uploads end
// together cost 600 such reads per row before, and a 20,000-picture
// batch fell ever further behind its events (issue 29); now a burst
// costs one.
func (s *transfersScreen) applyBurst(e transfer.Event) {
	var redraw, ended []string
	force := false
burst:
	for n := 1; ; n++ {
		r, end := s.apply(e)
		if r {
			redraw = append(redraw, e.Job)
		}
		if end {
			ended = append(ended, e.Job)
		}
		force = force || e.Kind != transfer.EventProgress
		if e.Kind != transfer.EventProgress && s.u.parkedTold() {
			// While a person was told an account's jobs wait for a
			// sign-in, whether they went on in between (and the person
			// is told again when they wait anew) is read event by
			// event, as before bursts: rare, and cheap at that.
			s.trayChanged(true)
			force = false
		}
		if n == burstMax {
			break
		}
		select {
		case e = <-s.u.deps.Events:
			continue
		default:
		}
		// Nothing waits: draw now, unless the last burst was drawn less
		// than burstGap ago; then what comes meanwhile joins this one.
		// Uploads that end one by one (a camera roll's, a few a second
		// each) made a burst each, and each drew its whole batch again:
		// n² in the batch's size (20,000 pictures kept the window's
		// thread busy for minutes).
		wait := time.Until(s.lastBurst.Add(max(burstGap, s.rest())))
		if wait <= 0 {
			break
		}
		timer := time.NewTimer(wait)
		select {
		case e = <-s.u.deps.Events:
			timer.Stop()
		case <-timer.C:
			break burst
		}
	}
	s.lastBurst = time.Now()
	told := map[string]bool{}
	for _, job := range ended {
		if d := s.deliveryOf(job); !told[d] {
			told[d] = true
			s.tell(d)
		}
	}
	if len(redraw) > 0 {
		s.flush(redraw)
	}
	s.trayChanged(force)
}

// apply folds an event into its job's view and reports whether the row
// should be redrawn now (state changes) rather than on the next tick,
// and whether the job just ended (its delivery is then told of, once:
// tell). A job of a delivery not known yet has the deliveries read again.
func (s *transfersScreen) apply(e transfer.Event) (redraw, ended bool) {
	redraw, ended = s.fold(e)
	s.mu.Lock()
	known := s.join(e.Snap)
	s.mu.Unlock()
	if !known {
		s.reread(e.Snap)
	}
	return redraw, ended
}

// tell notifies the person, once, that delivery id was sent (saved,
// done) or failed: not each of its jobs, and not again until its phase
// left that one (a retry).
func (s *transfersScreen) tell(id string) {
	rd := s.data(id)
	if rd == nil {
		return
	}
	switch rd.st.Phase {
	case delivery.PhaseSent, delivery.PhaseSaved, delivery.PhaseDone, delivery.PhaseFailed:
		// What the app stored of it meanwhile (its album, its draft) is
		// read once more, for its row's last words.
		s.reread(transfer.Snapshot{})
		if rd = s.data(id); rd == nil {
			return
		}
	}
	var snap transfer.Snapshot
	switch rd.st.Phase {
	case delivery.PhaseSent, delivery.PhaseSaved, delivery.PhaseDone:
		_, snap = rd.head()
	case delivery.PhaseFailed:
		snap = rd.view(rd.st.Member.Job).snap
	default:
		s.mu.Lock()
		delete(s.told, id)
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	last := s.told[id]
	s.told[id] = rd.st.Phase
	s.mu.Unlock()
	if last != rd.st.Phase {
		s.u.notifyDelivery(rd.title(), rd.mail(), snap)
	}
}

// fold folds an event into its job's view and reports whether the row
// should be redrawn now, and whether the job just ended done or failed.
// An event older than the view (a lower Seq) changes nothing.
func (s *transfersScreen) fold(e transfer.Event) (redraw, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[e.Job]
	if v == nil {
		v = &jobView{}
		s.views[e.Job] = v
	}
	if e.Snap.Seq < v.snap.Seq {
		return false, false
	}
	before, wasHeld := v.snap.State, v.snap.Held
	v.snap = e.Snap
	if e.Kind != transfer.EventRetrying {
		v.retryAt, v.woke, v.held = time.Time{}, false, false
	}
	switch e.Kind {
	case transfer.EventProgress:
		if e.Snap.Held != wasHeld { // held or let go while nothing moves: no tick would show it
			return true, false
		}
		v.dirty = true
		return false, false
	case transfer.EventRetrying:
		v.attempt, v.retryReason, v.retryStatus, v.woke, v.held = e.Attempt, e.Reason, e.Status, e.Woke, e.Held
		v.retryAt = s.now().Add(e.Wait)
	case transfer.EventDone:
		return true, before != transfer.StateDone
	case transfer.EventFailed:
		return true, before != transfer.StateFailed
	}
	return true, false
}

// flush draws the rows of jobs now, each delivery's once.
func (s *transfersScreen) flush(jobs []string) {
	s.flushes.Add(1)
	s.u.do(func() {
		defer s.timed(time.Now())
		s.syncRows()
		drawn := map[string]bool{}
		bound := false
		for _, id := range jobs {
			if d := s.deliveryOf(id); !drawn[d] {
				drawn[d] = true
				s.draw(id)
			}
			s.mu.Lock()
			v := s.views[id]
			bound = bound || v != nil && (v.snap.Account != "" || v.snap.SignInFor != "")
			s.mu.Unlock()
		}
		if bound && s.u.account != nil {
			s.u.account.accounts.keptChanged() // a job of a signed-out account parked or ended
		}
	})
}

// tick draws the rows that changed, unless the last drawing's rest is
// not over: they stay dirty for a later tick.
func (s *transfersScreen) tick() {
	if time.Since(time.Unix(0, s.drawnAt.Load())) >= s.rest() {
		s.flushDirty()
	}
}

func (s *transfersScreen) flushDirty() {
	s.mu.Lock()
	var ids []string
	for id, v := range s.views {
		if v.dirty || !v.retryAt.IsZero() {
			v.dirty = false
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	s.u.do(func() {
		defer s.timed(time.Now())
		s.syncRows()
		drawn := map[string]bool{}
		for _, id := range ids {
			if d := s.deliveryOf(id); !drawn[d] {
				drawn[d] = true
				s.draw(d)
			}
		}
	})
}

// ensureRow makes sure job (or delivery) id has its delivery's row (UI
// thread): a job of a delivery not known yet has the deliveries read
// again first, in the background.
func (s *transfersScreen) ensureRow(id string) {
	if did := s.deliveryOf(id); did != "" {
		s.syncRows()
		s.makeRow(did)
		return
	}
	s.u.goBackground(func(context.Context) {
		s.reread(transfer.Snapshot{ID: id})
		s.u.do(s.syncRows)
	})
}

// makeRow makes the row for delivery id (UI thread).
func (s *transfersScreen) makeRow(id string) {
	if id == "" || s.rows[id] != nil {
		return
	}
	r := &transferRow{id: id}
	r.name = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.dest = widget.NewLabel("")
	r.dest.Truncation = fyne.TextTruncateEllipsis
	r.state = newWrapLabel("")
	r.amount = widget.NewLabel("")
	r.bar = newDualBar()
	r.pause = newFocusButton(lang.X("row.pause", "Pause"), theme.MediaPauseIcon(), func() { s.act(id, delivery.VerbPause) })
	r.resume = newFocusButton(lang.X("row.resume", "Resume"), theme.MediaPlayIcon(), func() { s.act(id, delivery.VerbResume) })
	r.cancel = newFocusButton(lang.X("row.cancel", "Cancel"), theme.CancelIcon(), func() { s.askCancel(id) })
	r.retry = newFocusButton(lang.X("row.retry", "Retry"), theme.ViewRefreshIcon(), func() { s.act(id, delivery.VerbRetry) })
	r.sendAnyway = newFocusButton(lang.X("row.sendanyway", "Send anyway"), theme.UploadIcon(), func() { s.act(id, delivery.VerbSendAnyway) })
	r.sendAnyway.Hide()
	r.reopen = newFocusButton(lang.X("row.reopen", "Reopen in Compose"), theme.MailComposeIcon(), func() { s.reopen(id) })
	r.reopen.Hide()
	r.undo = s.undoButton(id)
	r.sendNow, r.retime = s.laterButtons(id)
	r.locate = newFocusButton(lang.X("row.locate", "Locate…"), theme.SearchIcon(), func() { s.locate(id) })
	r.locate.Hide()
	r.useFile = newFocusButton(lang.X("row.usefile", "Use this file"), theme.ConfirmIcon(), func() { s.useFile(id) })
	r.useFile.Hide()
	r.parts = container.NewVBox()
	r.parts.Hide()
	r.partRows = map[string]*partRow{}
	buttons := mirrorRTL(container.NewHBox(r.sendNow, r.retime, r.undo, r.sendAnyway, r.pause, r.resume, r.retry, r.useFile, r.locate, r.reopen, r.cancel))
	// In a right-to-left window the row reads from the right: the icon
	// and the name there, the buttons at the left, the amount after the
	// words (the bar fills from the right: dualBar).
	r.object = container.NewVBox(
		mirrorRTL(container.NewBorder(nil, nil, widget.NewIcon(theme.UploadIcon()), buttons, container.NewVBox(r.name, r.dest))),
		r.bar,
		mirrorRTL(container.NewBorder(nil, nil, nil, r.amount, r.state)),
		r.parts,
		widget.NewSeparator(),
	)
	s.rows[id] = r
	s.box.Remove(s.empty)
	// Newest first.
	s.box.Objects = append([]fyne.CanvasObject{r.object}, s.box.Objects...)
	s.paged.ShowFirst()
	s.box.Refresh()
	s.draw(id)
}

// heldMetered reports whether a job waits only because the connection is
// metered: the person may send it anyway.
func heldMetered(snap transfer.Snapshot) bool {
	return snap.Held == transfer.HeldMetered && snap.State.Unfinished() && snap.State != transfer.StatePaused
}

// clearFinished forgets the deliveries whose jobs all ended done or
// cancelled (a failed one stays: it may still be retried) and removes
// their rows; a message first, since the journal keeps what an
// unfinished job needs.
func (s *transfersScreen) clearFinished() {
	var gone []*rowData
	for id := range s.rows {
		rd := s.data(id)
		if rd == nil {
			continue
		}
		ended := true
		for _, m := range rd.d.Members {
			st := rd.view(m.Job).snap.State
			ended = ended && (st == transfer.StateDone || st == transfer.StateCancelled)
		}
		if ended {
			gone = append(gone, rd)
		}
	}
	for _, rd := range gone {
		members := slices.Clone(rd.d.Members)
		sort.SliceStable(members, func(i, j int) bool {
			return members[i].Role == delivery.RoleMessage && members[j].Role != delivery.RoleMessage
		})
		cleared := true
		for _, m := range members {
			if err := s.u.deps.Uploads.Forget(m.Job); err != nil {
				setLabel(s.status, lang.X("transfers.clear.failed", "Could not clear {{.Name}}: {{.Error}}", w{"Name": m.Job, "Error": windowText(err.Error())}))
				cleared = false
				break
			}
			s.mu.Lock()
			delete(s.views, m.Job)
			delete(s.owner, m.Job)
			s.mu.Unlock()
			delete(s.deleted, m.Job)
		}
		if !cleared {
			continue
		}
		s.mu.Lock()
		delete(s.dels, rd.d.ID)
		delete(s.told, rd.d.ID)
		s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == rd.d.ID })
		s.mu.Unlock()
		if r := s.rows[rd.d.ID]; r != nil {
			s.box.Remove(r.object)
			delete(s.rows, rd.d.ID)
		}
	}
	if len(s.rows) == 0 {
		s.box.Objects = []fyne.CanvasObject{s.empty}
	}
	s.box.Refresh()
}

// heldWords are a hold's reason in the person's language: the engine's
// and the app's holds are named by constants; another (a newer Carrier's)
// is shown as it came.
func heldWords(reason string) string {
	switch reason {
	case transfer.HeldMetered:
		return lang.X("held.metered", "Paused: metered connection")
	case app.HeldOffline:
		return lang.X("held.offline", "Offline: waiting for the network")
	case app.HeldAsleep:
		return lang.X("held.asleep", "Sleeping: will resume on wake")
	}
	return reason
}

// signInWords are a parked job's: its sign-in ended, and it goes on from
// where it stood once the person signs in again.
func signInWords(snap transfer.Snapshot) string {
	who := snap.SignInFor
	if who == "" {
		return lang.X("state.signin.google", "Sign in to your Google account again to continue")
	}
	return lang.X("state.signin", "Sign in to {{.Who}} again to continue", w{"Who": app.Printable(who)})
}

// stateWords says what a job is doing, as a person would want to hear it.
func stateWords(v jobView, now time.Time) string {
	snap := v.snap
	if heldMetered(snap) {
		return heldWords(transfer.HeldMetered)
	}
	switch snap.State {
	case transfer.StatePaused:
		return lang.X("state.paused", "Paused")
	case transfer.StateDone:
		if snap.Verified != "" {
			return lang.X("state.done.verified", "Done · verified ({{.How}})", w{"How": snap.Verified})
		}
		return lang.X("state.done", "Done")
	case transfer.StateCancelled:
		return lang.X("state.cancelled", "Cancelled")
	case transfer.StateFailed:
		return failureWords(snap)
	case transfer.StateQueued:
		return lang.X("state.queued", "Queued")
	case transfer.StateSignIn:
		return signInWords(snap)
	case transfer.StateMissing:
		return missingWords(snap)
	case transfer.StateWaiting:
		if snap.Blocked != "" {
			return lang.X("state.blocked", "Waiting: {{.Blocked}}. Retry that upload, or cancel this one.", w{"Blocked": snap.Blocked})
		}
		return lang.X("state.waiting", "Waiting for the uploads it needs to finish first")
	case transfer.StateRetrying:
		if v.held {
			return heldWords(v.retryReason) // the app's hold: "Offline: waiting for the network"
		}
		if v.woke {
			return lang.X("state.woke", "Resuming after sleep: asking the server where the upload stands")
		}
		when := lang.X("state.retry.now", "trying again now")
		if left := v.retryAt.Sub(now); left > 0 {
			when = lang.X("state.retry.in", "retrying in {{.Time}}", w{"Time": humanDuration(left.Round(time.Second))})
		}
		words := lang.X("state.retrying", "{{.Cause}}; {{.When}}", w{"Cause": retryCause(v), "When": when})
		if v.retryStatus == 0 {
			// The engine's own account of the connection, for whoever
			// needs more than a sentence.
			if d := detailLine(v.retryReason); d != "" {
				words += "\n" + d
			}
		}
		return words
	}
	words := lang.X("state.uploading", "Uploading")
	if r := humanRate(snap.Rate); r != "" {
		words += " · " + r
		if left := snap.Size - snap.Confirmed; left > 0 && snap.Rate > 0 {
			words += " · " + lang.X("tray.left", "{{.Time}} left", w{"Time": humanDuration(time.Duration(float64(left) / snap.Rate * float64(time.Second)))})
		}
	}
	return words
}

// retryCause says what failed before a retry, by its cause: a server's
// trouble is the server's ("Google's server had a problem (503)"), never
// the network's; only a request that got no answer blames the connection.
func retryCause(v jobView) string {
	server := serverName(v.snap.URL)
	switch s := v.retryStatus; {
	case s >= 500:
		return lang.X("retry.5xx", "{{.Server}} had a problem ({{.Status}})", w{"Server": server, "Status": s})
	case s == 429 || s == 403: // Too Many Requests; a 403 is retried only when it asks to slow down
		return lang.X("retry.slowdown", "{{.Server}} asked Carrier to slow down ({{.Status}})", w{"Server": server, "Status": s})
	case s == 408: // Request Timeout
		return lang.X("retry.timeout", "{{.Server}} gave up waiting for the upload ({{.Status}})", w{"Server": server, "Status": s})
	case s != 0:
		return lang.X("retry.status", "{{.Server}} answered {{.Status}}", w{"Server": server, "Status": s})
	}
	// No answer: the engine's words say what became of the connection
	// ("the connection dropped", "could not reach the server").
	return noAnswerWords(v.retryReason, server)
}

// serverName names the server a job talks to, for people.
func serverName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return lang.X("server.unknown", "The server")
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "google.com" || strings.HasSuffix(host, ".google.com") || host == "googleapis.com" || strings.HasSuffix(host, ".googleapis.com"):
		return lang.X("server.google", "Google's server")
	case host == "localhost" || net.ParseIP(host).IsLoopback():
		return lang.X("server.sandbox", "The sandbox")
	}
	return lang.X("server.host", "The server at {{.Host}}", w{"Host": app.Printable(host)})
}

func jobName(r transfer.Snapshot) string {
	if r.Label != "" {
		return r.Label
	}
	if r.Path != "" {
		p := r.Path
		if i := strings.LastIndexAny(p, `/\`); i >= 0 {
			p = p[i+1:]
		}
		return p
	}
	return r.ID
}

// italic is a label in italics, in display order.
func italic(text string) *widget.Label {
	l := newLabel(text)
	l.TextStyle = fyne.TextStyle{Italic: true}
	return l
}
