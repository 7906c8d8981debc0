package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// NoticeAction is a button on a desktop notification; Do may run on any
// goroutine.
type NoticeAction struct {
	Key   string // "default": the notification itself clicked
	Label string
	Do    func()
}

// notifyDelivery tells the person, outside the window, that what they
// sent (named name) was sent or failed, with what they can do next as
// buttons: Retry and Show for a failure, Open in Mailbox for a message
// (mail) the Mailbox can show (the app says which: mailbox.Mailbox.Holds, one
// sent to the server it reads), else Show. snap is its job the news is
// of: the message sent, or the member that failed (its role is the one
// its stored delivery gives). Where the desktop's service cannot be
// reached (Deps.Notify fails or is nil) Fyne's notification says the
// same without buttons. Any goroutine but one holding the transfers
// screen's lock: the service is called off the caller's.
func (u *UI) notifyDelivery(name string, mail bool, snap transfer.Snapshot) {
	title, body := lang.X("notify.sent", "Carrier: sent"), name
	if snap.State == transfer.StateFailed {
		title, body = lang.X("notify.failed", "Carrier: failed"), lang.X("notify.failed.body", "{{.Name}}: {{.Error}}", w{"Name": body, "Error": failureWordsAs(snap, u.transfers.roleOf(snap))})
	}
	body = app.PrintableLines(body) // a failure's server words go on a line of their own
	fallback := func() { u.fyneNotify(fyne.NewNotification(title, body)) }
	if u.deps.Notify == nil {
		fallback()
		return
	}
	show := NoticeAction{Key: "show", Label: lang.X("notify.show", "Show"), Do: func() { u.bringBack(u.transfersTab) }}
	var actions []NoticeAction
	if snap.State == transfer.StateFailed {
		id := snap.ID
		actions = append(actions, NoticeAction{Key: "retry", Label: lang.X("notify.retry", "Retry"), Do: func() {
			// What the row's Retry does: the delivery's failed members.
			u.goBackground(func(ctx context.Context) {
				u.transfers.actOn(ctx, id, delivery.VerbRetry, delivery.ByJob(u.deps.Uploads.Jobs()))
			})
		}}, show)
	} else if mail && u.mailbox.mailbox().Holds(snap) {
		id := gmailID(snap)
		actions = append(actions, NoticeAction{Key: "mailbox", Label: lang.X("notify.mailbox", "Open in Mailbox"), Do: func() {
			u.bringBack(u.mailboxTab)
			if id != "" {
				u.do(func() { u.mailbox.openMessage(id) })
			}
		}})
	} else {
		actions = append(actions, show)
	}
	actions = append(actions, NoticeAction{Key: "default", Label: lang.X("notify.show", "Show"), Do: show.Do})
	u.goBackground(func(context.Context) {
		if err := u.deps.Notify(title, body, actions); err != nil {
			fallback()
		}
	})
}

// gmailID is the id of the message a job sent, from Gmail's answer: a
// Message ({"id":…}) for messages.send, insert and import, a Draft
// ({"id":…,"message":{"id":…}}) for drafts, whose message the Mailbox
// lists under the draft. "" when the answer says none.
func gmailID(snap transfer.Snapshot) string {
	if snap.Response == nil {
		return ""
	}
	var r struct {
		ID      string `json:"id"`
		Message struct {
			ID string `json:"id"`
		} `json:"message"`
	}
	if json.Unmarshal(snap.Response.Body, &r) != nil {
		return ""
	}
	if r.Message.ID != "" {
		return r.Message.ID
	}
	return r.ID
}

// bringBack shows the window (hidden in the tray, or behind others) on
// tab t. Any goroutine.
func (u *UI) bringBack(t *tab) {
	u.do(func() {
		u.win.Show()
		u.win.RequestFocus()
		u.tabs.Select(t)
	})
}

// parkedNotices are the accounts whose parked jobs the person was told
// of: one notification an account while its jobs wait for it, not one a
// job nor one an event. An account is told again only once its jobs went
// on after it (they confirmed more bytes than when it was told) or ended:
// a job that is only tried and parks again (at a start, or after a
// sign-in as someone else) tells nobody twice.
type parkedNotices struct {
	mu   sync.Mutex
	told map[string]int64 // account -> the bytes its jobs had confirmed when told
}

// signInWho is whom a parked job waits for: the account it goes as, or
// the server it needs a credential for.
func signInWho(s transfer.Snapshot) string { return cmp.Or(s.SignInFor, s.Account) }

// parkedByAccount are the jobs waiting for a sign-in, one for each
// account, in the order of the accounts' names.
func parkedByAccount(snaps []transfer.Snapshot) []transfer.Snapshot {
	var out []transfer.Snapshot
	for _, s := range snaps {
		if s.State == transfer.StateSignIn && !slices.ContainsFunc(out, func(o transfer.Snapshot) bool { return signInWho(o) == signInWho(s) }) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b transfer.Snapshot) int { return cmp.Compare(signInWho(a), signInWho(b)) })
	return out
}

// confirmedFor is how many bytes the jobs of who have had confirmed.
func confirmedFor(snaps []transfer.Snapshot, who string) int64 {
	var n int64
	for _, s := range snaps {
		if s.Account == who || signInWho(s) == who {
			n += s.Confirmed
		}
	}
	return n
}

// unfinishedFor reports whether who has a job not done yet.
func unfinishedFor(snaps []transfer.Snapshot, who string) bool {
	return slices.ContainsFunc(snaps, func(s transfer.Snapshot) bool {
		return (s.Account == who || signInWho(s) == who) && s.State.Unfinished()
	})
}

// parkedChanged tells the person of each account that has jobs newly
// waiting for its sign-in, once. Any goroutine.
// parkedTold reports whether the person was told of an account whose
// jobs wait for a sign-in and has not seen them go on since.
func (u *UI) parkedTold() bool {
	u.parked.mu.Lock()
	defer u.parked.mu.Unlock()
	return len(u.parked.told) > 0
}

func (u *UI) parkedChanged(snaps []transfer.Snapshot) {
	parked := parkedByAccount(snaps)
	p := &u.parked
	p.mu.Lock()
	if p.told == nil {
		p.told = map[string]int64{}
	}
	for who, mark := range p.told {
		if !slices.ContainsFunc(parked, func(s transfer.Snapshot) bool { return signInWho(s) == who }) && (confirmedFor(snaps, who) > mark || !unfinishedFor(snaps, who)) {
			delete(p.told, who)
		}
	}
	var tell []transfer.Snapshot
	for _, s := range parked {
		if _, ok := p.told[signInWho(s)]; !ok {
			p.told[signInWho(s)] = confirmedFor(snaps, signInWho(s))
			tell = append(tell, s)
		}
	}
	p.mu.Unlock()
	for _, s := range tell {
		u.notifyParked(s)
	}
}

// notifyParked says that an account's uploads wait for it to sign in
// again, with a Sign in button that starts that sign-in.
func (u *UI) notifyParked(snap transfer.Snapshot) {
	title, body := lang.X("notify.signin", "Carrier: sign in again"), app.Printable(signInWords(snap))
	if u.deps.Notify == nil {
		u.fyneNotify(fyne.NewNotification(title, body))
		return
	}
	who := signInWho(snap)
	actions := []NoticeAction{
		{Key: "signin", Label: lang.X("notify.signin.action", "Sign in"), Do: func() { u.signInAgain(who) }},
		{Key: "default", Label: lang.X("notify.show", "Show"), Do: func() { u.bringBack(u.transfersTab) }},
	}
	u.goBackground(func(context.Context) {
		if err := u.deps.Notify(title, body, actions); err != nil {
			u.fyneNotify(fyne.NewNotification(title, body))
		}
	})
}

// signInAgain brings the window back on the Account screen and starts
// the sign-in of who there, as its "Sign in again" does: the browser
// offers that account first, with the client it signed in with; with
// none known yet, the set-up assistant opens. Jobs parked for who go on
// once it is signed in (app.Google.OnSignIn). Any goroutine.
func (u *UI) signInAgain(who string) {
	hint := who
	if !strings.Contains(who, "@") || strings.Contains(who, "://") {
		hint = "" // a server, not an account: the person chooses in the browser
	}
	u.do(func() {
		u.win.Show()
		u.win.RequestFocus()
		u.tabs.Select(u.accountTab)
		switch {
		case u.account.accounts != nil:
			u.account.accounts.addAccount(nil, hint)
		case u.deps.SignIn != nil:
			u.account.openAssistantFor(hint)
		}
	})
}

// accountsWatch is what Deps.Accounts offers when it hears of sign-ins and
// sign-outs made outside the window (app.WindowAccounts: `carrier login`
// in a terminal).
type accountsWatch interface {
	OnChange(f func())
}

// whenAccountsChange has f run on the UI thread each time an account
// signs in or out outside the window; nothing where that is not heard.
func (u *UI) whenAccountsChange(f func()) {
	if wa, ok := u.deps.Accounts.(accountsWatch); ok {
		wa.OnChange(func() {
			if u.ctx.Err() == nil { // the window is still there
				u.do(f)
			}
		})
	}
}
