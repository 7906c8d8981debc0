package ui

import (
	"context"
	"fyne.io/fyne/v2/lang"
	"net"
	"net/url"
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
	u       *UI
	mu      sync.Mutex // guards views; widgets are touched on the UI thread only
	views   map[string]*jobView
	rows    map[string]*transferRow
	box     *fyne.Container // the rows, newest first (paged's Box)
	paged   *pagedList
	empty   *widget.Label
	content fyne.CanvasObject
	now     func() time.Time
	draws   int         // rows drawn, for the throttle's test
	ticking atomic.Bool // the redraw ticker runs: only while a job moves
	status  *wrapLabel
	clear   *widget.Button
	network *networkSettings // nil when the queue takes no settings

	// A message with Drive links is one row: the jobs it needs (its
	// uploads to Drive and their shares) are its parts, drawn under it.
	// These are touched on the UI thread only.
	parent   map[string]string   // part → its message
	children map[string][]string // message → its parts, in its Needs' order
	deleted  map[string]bool     // Drive uploads whose file was deleted after a cancel
	ask      *driveAsk           // the open question about a cancelled message's Drive files

	cancelling *cancelAsk // the open question before a cancel (reopen.go)
}

type transferRow struct {
	id                           string
	name, dest, amount           *widget.Label
	state                        *wrapLabel
	bar                          *dualBar
	pause, resume, cancel, retry *widget.Button
	sendAnyway                   *widget.Button  // a large upload held on a metered connection
	reopen                       *widget.Button  // a cancelled or failed message, back into Compose
	parts                        *fyne.Container // the part rows, under the message's own
	partRows                     map[string]*partRow
	object                       fyne.CanvasObject
}

func newTransfersScreen(u *UI) *transfersScreen {
	s := &transfersScreen{u: u, views: map[string]*jobView{}, rows: map[string]*transferRow{}, now: time.Now,
		parent: map[string]string{}, children: map[string][]string{}, deleted: map[string]bool{}}
	s.paged = newPagedList("upload")
	s.box = s.paged.Box
	s.empty = newLabel(lang.X("transfers.empty", "No uploads yet. Messages you send and pictures you post appear here."))
	s.box.Add(s.empty)
	s.status = newWrapLabel("")
	s.clear = widget.NewButtonWithIcon(display(lang.X("transfers.clear", "Clear finished")), theme.DeleteIcon(), s.clearFinished)
	top := container.NewVBox(container.NewBorder(nil, nil, nil, s.clear, italic(lang.X("transfers.intro", "Uploads survive lost connections, sleep and restarts: each one resumes where the server says it stands."))))
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
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].Created.Before(snaps[j].Created) })
	for _, r := range snaps {
		s.views[r.ID] = &jobView{snap: r}
		s.ensureRow(r.ID)
	}
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
			if s.apply(e) {
				s.flush(e.Job)
			}
			s.trayChanged(e.Kind != transfer.EventProgress)
		case <-ticks:
			s.flushDirty()
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

// apply folds an event into its job's view and reports whether the row
// should be redrawn now (state changes) rather than on the next tick. An
// event older than the view (a lower Seq) changes nothing.
func (s *transfersScreen) apply(e transfer.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[e.Job]
	if v == nil {
		v = &jobView{}
		s.views[e.Job] = v
	}
	if e.Snap.Seq < v.snap.Seq {
		return false
	}
	before, wasHeld := v.snap.State, v.snap.Held
	v.snap = e.Snap
	if e.Kind != transfer.EventRetrying {
		v.retryAt, v.woke, v.held = time.Time{}, false, false
	}
	switch e.Kind {
	case transfer.EventProgress:
		if e.Snap.Held != wasHeld { // held or let go while nothing moves: no tick would show it
			return true
		}
		v.dirty = true
		return false
	case transfer.EventRetrying:
		v.attempt, v.retryReason, v.retryStatus, v.woke, v.held = e.Attempt, e.Reason, e.Status, e.Woke, e.Held
		v.retryAt = s.now().Add(e.Wait)
	case transfer.EventDone:
		if before != transfer.StateDone && !isPart(v.snap) { // the message says it is sent, not each of its parts
			s.notify("Sent", v)
		}
	case transfer.EventFailed:
		if before != transfer.StateFailed {
			s.notify("Failed", v)
		}
	}
	return true
}

func (s *transfersScreen) notify(_ string, v *jobView) { s.u.notifyJob(v.snap) }

func (s *transfersScreen) flush(id string) {
	s.u.do(func() {
		s.ensureRow(id)
		s.draw(s.top(id))
		s.mu.Lock()
		v := s.views[id]
		bound := v != nil && (v.snap.Account != "" || v.snap.SignInFor != "")
		s.mu.Unlock()
		if bound && s.u.account != nil {
			s.u.account.accounts.keptChanged() // a job of a signed-out account parked or ended
		}
	})
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
		drawn := map[string]bool{}
		for _, id := range ids {
			s.ensureRow(id)
			if top := s.top(id); !drawn[top] {
				drawn[top] = true
				s.draw(top)
			}
		}
	})
}

// ensureRow makes the row for a job (UI thread).
func (s *transfersScreen) ensureRow(id string) {
	if id == "" || s.rows[id] != nil || s.parent[id] != "" {
		return
	}
	s.mu.Lock()
	if s.views[id] == nil {
		s.views[id] = &jobView{snap: transfer.Snapshot{ID: id}}
	}
	s.mu.Unlock()
	r := &transferRow{id: id}
	r.name = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.dest = widget.NewLabel("")
	r.dest.Truncation = fyne.TextTruncateEllipsis
	r.state = newWrapLabel("")
	r.amount = widget.NewLabel("")
	r.bar = newDualBar()
	r.pause = widget.NewButtonWithIcon(display(lang.X("row.pause", "Pause")), theme.MediaPauseIcon(), func() { s.act(id, "pause") })
	r.resume = widget.NewButtonWithIcon(display(lang.X("row.resume", "Resume")), theme.MediaPlayIcon(), func() { s.act(id, "resume") })
	r.cancel = widget.NewButtonWithIcon(display(lang.X("row.cancel", "Cancel")), theme.CancelIcon(), func() { s.askCancel(id) })
	r.retry = widget.NewButtonWithIcon(display(lang.X("row.retry", "Retry")), theme.ViewRefreshIcon(), func() { s.act(id, "retry") })
	r.sendAnyway = widget.NewButtonWithIcon(display(lang.X("row.sendanyway", "Send anyway")), theme.UploadIcon(), func() { s.act(id, "send anyway") })
	r.sendAnyway.Hide()
	r.reopen = widget.NewButtonWithIcon(display(lang.X("row.reopen", "Reopen in Compose")), theme.MailComposeIcon(), func() { s.reopen(id) })
	r.reopen.Hide()
	r.parts = container.NewVBox()
	r.parts.Hide()
	r.partRows = map[string]*partRow{}
	buttons := mirrorRTL(container.NewHBox(r.sendAnyway, r.pause, r.resume, r.retry, r.reopen, r.cancel))
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

// draw puts a job's view into its row (UI thread).
func (s *transfersScreen) draw(id string) {
	r := s.rows[id]
	if r == nil {
		return
	}
	s.draws++
	s.mu.Lock()
	v := *s.views[id]
	s.views[id].lastDrawn = s.now()
	s.mu.Unlock()
	if s.adopt(id, v.snap.Needs) {
		s.drawGroup(r, v)
		return
	}
	snap := v.snap
	setLabel(r.name, jobTitle(snap))
	setLabel(r.dest, whereWords(snap.URL, s.u.deps.Endpoint)+accountNote(snap))
	frac := func(n int64) float64 {
		if snap.Size <= 0 {
			if snap.State == transfer.StateDone {
				return 1
			}
			return 0
		}
		return float64(n) / float64(snap.Size)
	}
	r.bar.Set(frac(snap.Confirmed), frac(snap.Sent))
	setLabel(r.state, stateWords(v, s.now()))
	r.state.Importance = widget.MediumImportance
	switch snap.State {
	case transfer.StateFailed:
		r.state.Importance = widget.DangerImportance
	case transfer.StateDone:
		r.state.Importance = widget.SuccessImportance
	}
	r.state.Refresh()
	amount := lang.X("row.amount", "{{.Done}} of {{.Size}}", w{"Done": humanSize(snap.Confirmed), "Size": humanSize(snap.Size)})
	if snap.Sent > snap.Confirmed {
		amount = lang.X("row.amount.unconfirmed", "{{.Done}} of {{.Size}} ({{.Sent}} sent, not yet confirmed)", w{"Done": humanSize(snap.Confirmed), "Size": humanSize(snap.Size), "Sent": humanSize(snap.Sent - snap.Confirmed)})
	}
	setLabel(r.amount, amount)
	show := func(b *widget.Button, on bool) {
		if on {
			b.Show()
		} else {
			b.Hide()
		}
	}
	st := snap.State
	show(r.pause, st.Unfinished() && st != transfer.StatePaused)
	show(r.resume, st == transfer.StatePaused)
	show(r.retry, st == transfer.StateFailed && !retryCannotMend(snap))
	show(r.cancel, st.Unfinished() || st == transfer.StateFailed)
	show(r.sendAnyway, s.u.deps.Limits != nil && heldMetered(snap))
	show(r.reopen, s.canReopen(snap))
}

// heldMetered reports whether a job waits only because the connection is
// metered: the person may send it anyway.
func heldMetered(snap transfer.Snapshot) bool {
	return snap.Held == transfer.HeldMetered && snap.State.Unfinished() && snap.State != transfer.StatePaused
}

// clearFinished forgets the jobs that are done or cancelled (failed ones
// stay: they may still be retried) and removes their rows. A message with
// parts goes with all of them, once every one has ended; the message first,
// since the journal keeps what an unfinished job needs.
func (s *transfersScreen) clearFinished() {
	var gone []string
	s.mu.Lock()
	for id := range s.rows {
		ended := true
		for _, j := range append([]string{id}, s.children[id]...) {
			v := s.views[j]
			ended = ended && v != nil && (v.snap.State == transfer.StateDone || v.snap.State == transfer.StateCancelled)
		}
		if ended {
			gone = append(gone, id)
		}
	}
	s.mu.Unlock()
	for _, id := range gone {
		cleared := true
		for _, j := range append([]string{id}, s.children[id]...) {
			if err := s.u.deps.Uploads.Forget(j); err != nil {
				setLabel(s.status, lang.X("transfers.clear.failed", "Could not clear {{.Name}}: {{.Error}}", w{"Name": j, "Error": windowText(err.Error())}))
				cleared = false
				break
			}
			s.mu.Lock()
			delete(s.views, j)
			s.mu.Unlock()
		}
		if !cleared {
			continue
		}
		for _, j := range s.children[id] {
			delete(s.parent, j)
			delete(s.deleted, j)
		}
		delete(s.children, id)
		if r := s.rows[id]; r != nil {
			s.box.Remove(r.object)
			delete(s.rows, id)
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
