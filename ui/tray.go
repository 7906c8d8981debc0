package ui

import (
	"context"
	"slices"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// trayEvery caps how often the tray's words change while uploads move: a
// tray menu is rebuilt over D-Bus on each change, and a countdown read in
// a tooltip needs no more than one step a second.
const trayEvery = time.Second

// TrayStatus is the tray's first line and tooltip, from the jobs'
// snapshots: "2 uploads · 43% · 3 min left". It counts messages and
// posts, not the Drive uploads and shares a message is made of (the
// Transfers screen shows them as one row), but their bytes count: they
// are most of what is left. The percentage is of the bytes the server
// confirmed, never rounded up to 100 while something is left; the time
// left is what is left of the jobs not paused at the confirmed pace of
// those running, shown only once a pace is known.
func TrayStatus(snaps []transfer.Snapshot) string { return trayStatus(snaps, guessRole) }

// trayStatus is TrayStatus with each job's role in its delivery given by
// role (the transfers screen's roles).
func trayStatus(snaps []transfer.Snapshot, role func(transfer.Snapshot) delivery.Role) string {
	var count, paused int
	var size, confirmed, left int64
	var rate float64
	for _, s := range snaps {
		if !s.State.Unfinished() {
			continue
		}
		if !isPart(s, role(s)) {
			count++
			if s.State == transfer.StatePaused {
				paused++
			}
		}
		size += s.Size
		confirmed += min(s.Confirmed, s.Size)
		if s.State != transfer.StatePaused {
			left += s.Size - min(s.Confirmed, s.Size)
		}
		if s.State.Active() {
			rate += s.ConfirmedRate
		}
	}
	if count == 0 {
		return lang.X("tray.none", "No uploads")
	}
	words := lang.XN("tray.uploads", "{{.Count}} uploads", count, w{"Count": count})
	if paused == count {
		words = lang.XN("tray.uploads.paused", "{{.Count}} uploads paused", count, w{"Count": count})
	}
	if size > 0 {
		// floored: 100 only when all arrived
		words += " · " + lang.X("tray.percent", "{{.Percent}}%", w{"Percent": confirmed * 100 / size})
	}
	if rate > 0 && left > 0 {
		words += " · " + lang.X("tray.left", "{{.Time}} left", w{"Time": humanDuration(time.Duration(float64(left) / rate * float64(time.Second)))})
	}
	return words
}

// TrayHooks are what the tray's menu does outside the window's content.
type TrayHooks struct {
	Show    func()       // brings the window back
	Quit    func()       // quits Carrier
	Refresh func()       // redraws the tray's menu after an item changed
	Tooltip func(string) // sets the tray icon's tooltip; nil: none
}

// tray is the system tray's menu: the uploads' progress on its first
// line (and in the tooltip), Pause all, Resume all, the upload speed.
type tray struct {
	u             *UI
	hooks         TrayHooks
	menu          *fyne.Menu
	status        *fyne.MenuItem
	pause, resume *fyne.MenuItem
	rest          []*fyne.MenuItem // the items under the status line and the sign-ins

	mu     sync.Mutex // guards what was shown last, read off the UI thread
	shown  string
	paused bool     // Resume all was enabled
	active bool     // Pause all was enabled
	signIn []string // the sign-in items' words, one for each account whose uploads wait for it
	undo   []string // the Undo items' words, one for each message held for its undo window
	at     time.Time
}

// TrayMenu builds the system tray's menu and keeps its first line and
// the tooltip following the uploads. Call it once, after New.
func (u *UI) TrayMenu(h TrayHooks) *fyne.Menu {
	t := &tray{u: u, hooks: h}
	t.status = fyne.NewMenuItem(lang.X("tray.none", "No uploads"), func() {
		h.Show()
		u.ShowTransfers()
	})
	t.pause = fyne.NewMenuItem(lang.X("tray.pauseall", "Pause all"), u.PauseAll)
	t.resume = fyne.NewMenuItem(lang.X("tray.resumeall", "Resume all"), u.ResumeAll)
	items := []*fyne.MenuItem{t.status, fyne.NewMenuItemSeparator(), fyne.NewMenuItem(lang.X("tray.show", "Show Carrier"), h.Show), t.pause, t.resume}
	if speed := u.SpeedMenu(t.refresh); speed != nil {
		items = append(items, speed)
	}
	items = append(items, fyne.NewMenuItemSeparator(), fyne.NewMenuItem(lang.X("tray.quit", "Quit"), h.Quit))
	t.rest = items[1:]
	t.menu = fyne.NewMenu("Carrier", items...)
	u.tray.Store(t)
	t.update(true)
	return t.menu
}

func (t *tray) refresh() {
	if t.hooks.Refresh != nil {
		t.hooks.Refresh()
	}
}

// update puts the uploads' state into the menu and the tooltip when it
// changed: at once when force (a job changed state), else at most every
// trayEvery (progress). Any goroutine.
func (t *tray) update(force bool) {
	snaps := t.u.transfers.snapshots()
	role := t.u.transfers.roles()
	text := trayStatus(snaps, role)
	parked := parkedByAccount(snaps)
	signIn := make([]string, len(parked))
	for i, s := range parked {
		signIn[i] = app.Printable(signInWords(s))
	}
	now := time.Now()
	held := undoableBy(snaps, now, role)
	undo := make([]string, len(held))
	for i, s := range held {
		undo[i] = lang.X("tray.undo", "Undo sending '{{.Name}}'", w{"Name": app.Printable(jobName(s))})
	}
	var active, paused bool
	for _, s := range snaps {
		if s.State == transfer.StatePaused {
			paused = true
		} else if s.State.Unfinished() {
			active = true
		}
	}
	t.mu.Lock()
	if text == t.shown && active == t.active && paused == t.paused && slices.Equal(signIn, t.signIn) && slices.Equal(undo, t.undo) || !force && now.Sub(t.at) < trayEvery {
		t.mu.Unlock()
		return
	}
	t.shown, t.active, t.paused, t.signIn, t.undo, t.at = text, active, paused, signIn, undo, now
	t.mu.Unlock()
	t.u.do(func() {
		t.status.Label = text
		t.pause.Disabled = !active
		t.resume.Disabled = !paused
		// A "Sign in to ADDRESS again to continue" item for each account
		// whose uploads wait, there only while they wait.
		items := []*fyne.MenuItem{t.status}
		for i, s := range parked {
			who := signInWho(s)
			items = append(items, fyne.NewMenuItem(signIn[i], func() { t.u.signInAgain(who) }))
		}
		// An "Undo sending 'Subject'" item for each message still in its
		// undo window: Undo from the tray, the window shown to reopen it.
		for i, s := range held {
			id := s.ID
			items = append(items, fyne.NewMenuItem(undo[i], func() {
				if t.hooks.Show != nil {
					t.hooks.Show()
				}
				t.u.ShowTransfers()
				t.u.transfers.undo(id)
			}))
		}
		t.menu.Items = append(items, t.rest...)
		t.refresh()
		if t.hooks.Tooltip != nil {
			tip := lang.X("tray.tooltip", "Carrier: {{.Status}}", w{"Status": text})
			for _, words := range signIn {
				tip += "\n" + words
			}
			t.hooks.Tooltip(tip)
		}
	})
}

// undoable are the messages among snaps held for their undo window at
// now, which Undo may still stop.
func undoable(snaps []transfer.Snapshot, now time.Time) []transfer.Snapshot {
	return undoableBy(snaps, now, guessRole)
}

// undoableBy is undoable with each job's role in its delivery given by
// role (the transfers screen's roles).
func undoableBy(snaps []transfer.Snapshot, now time.Time, role func(transfer.Snapshot) delivery.Role) []transfer.Snapshot {
	var out []transfer.Snapshot
	for _, s := range snaps {
		// A message sent later (more than the longest undo window ahead) is
		// the Transfers row's to unschedule, not the tray's.
		if isMessage(role(s)) && s.State.Unfinished() && s.SendAt.After(now) && !s.SendAt.After(now.Add(app.MaxUndoWindow)) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b transfer.Snapshot) int { return a.Created.Compare(b.Created) })
	return out
}

// snapshots are the newest snapshots of the jobs the screen knows. Any
// goroutine.
func (s *transfersScreen) snapshots() []transfer.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]transfer.Snapshot, 0, len(s.views))
	for _, v := range s.views {
		out = append(out, v.snap)
	}
	return out
}

// trayChanged tells the tray, if there is one, that jobs changed, and the
// person of accounts whose uploads newly wait for them. Any goroutine.
func (s *transfersScreen) trayChanged(force bool) {
	if force { // a state changed: a job may wait for a sign-in, or no longer
		s.u.parkedChanged(s.snapshots())
	}
	if t := s.u.tray.Load(); t != nil {
		t.update(force)
	}
}

// PauseAll pauses every unfinished upload not paused yet: each
// delivery's, as its row's Pause does.
func (u *UI) PauseAll() {
	u.transfers.actEach(u.ctx, delivery.VerbPause, func(s transfer.Snapshot) bool {
		return s.State.Unfinished() && s.State != transfer.StatePaused
	})
}

// ResumeAll resumes every paused upload, each delivery's as its row's
// Resume does, off the UI thread: a resume reads the journal.
func (u *UI) ResumeAll() {
	u.goBackground(func(ctx context.Context) {
		u.transfers.actEach(ctx, delivery.VerbResume, func(s transfer.Snapshot) bool { return s.State == transfer.StatePaused })
	})
}
