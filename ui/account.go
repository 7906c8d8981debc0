package ui

import (
	"context"
	"errors"
	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/internal/app"
)

// chaosFaults is what chaos mode asks of the sandbox: enough trouble to
// watch Carrier recover, not so much that nothing moves.
const chaosFaults = "seed=42,reset=0.08,err5xx=0.08,stall=0.02,stallfor=45s,partial=0.2,dropfinal=0.1,latency=40ms,rate=4MB"

type accountScreen struct {
	u               *UI
	who             *wrapLabel
	drive           *wrapLabel // whether the account allows Drive links
	signIn, signOut *focusButton
	chaos           *namedCheck
	settings        *settingsSection
	accounts        *accountsSection // nil without deps.Accounts
	assistant       *setupAssistant  // the last one opened, for tests
	status          *wrapLabel
	content         fyne.CanvasObject
}

func newAccountScreen(u *UI) *accountScreen {
	a := &accountScreen{u: u}
	a.who = newWrapLabel("")
	a.who.TextStyle = fyne.TextStyle{Bold: true}
	a.status = newWrapLabel("")
	a.drive = newWrapLabel("")
	a.drive.Hide()
	a.signIn = newFocusButton(lang.X("account.signin", "Sign in with Google…"), theme.LoginIcon(), a.openAssistant)
	a.signOut = newFocusButton(lang.X("account.signout", "Sign out"), theme.LogoutIcon(), a.doSignOut)
	a.chaos = newNamedCheck(lang.X("account.chaos", "Chaos mode: the sandbox drops connections, fails, stalls and slows down, so you can watch uploads recover"), nil)
	box := container.NewVBox(a.who, a.drive, container.NewHBox(a.signIn, a.signOut), whenSaid(a.status))
	if u.deps.Accounts != nil {
		a.accounts = newAccountsSection(u, a)
		box.Add(widget.NewSeparator())
		box.Add(a.accounts.Object)
	}
	if u.deps.SetFaults != nil {
		box.Add(widget.NewSeparator())
		box.Add(a.chaos)
		// Off unless the person turned it on last time.
		if u.app.Preferences().BoolWithFallback(prefChaos, false) {
			a.chaos.SetChecked(true)
			a.setChaos(true)
		}
	}
	a.chaos.OnChanged = a.setChaos
	a.settings = newSettingsSection(u)
	box.Add(widget.NewSeparator())
	box.Add(a.settings.Object)
	a.content = container.NewPadded(box)
	a.show()
	return a
}

func (a *accountScreen) show() {
	acct := Account{Sandbox: true}
	if a.u.deps.Account != nil {
		acct = a.u.deps.Account()
	}
	if a.u.compose != nil {
		a.u.compose.accountChanged()
	}
	if acct.Sandbox && acct.Address != "" {
		setLabel(a.who, lang.X("account.sandbox.as", "Sending as {{.Address}} on this computer: the sandbox keeps messages here, nothing goes to Google", w{"Address": acct.Address}))
	} else if acct.Sandbox {
		setLabel(a.who, lang.X("account.sandbox", "Sandbox: messages stay on this computer"))
	} else {
		setLabel(a.who, lang.X("account.google", "Signed in as {{.Address}}: messages go to Google", w{"Address": acct.Address}))
	}
	if a.u.deps.SignIn == nil || a.accounts != nil {
		a.signIn.Hide() // the accounts' list has its own "Set up Google sign-in…"
	} else if acct.Sandbox {
		a.signIn.Show()
	} else {
		a.signIn.Hide()
	}
	if a.accounts != nil {
		// Each account signs out from its own row.
		a.accounts.refresh()
		a.signOut.Hide()
		if a.u.compose != nil && a.u.compose.from != nil {
			a.u.compose.from.refresh()
		}
	} else if a.u.deps.SignOut == nil || acct.Sandbox {
		a.signOut.Hide()
	} else {
		a.signOut.Show()
	}
	if acct.Sandbox || a.u.deps.May == nil {
		a.drive.Hide()
	} else {
		a.checkDrive()
	}
}

// checkDrive says whether the account allows Drive links, read off the UI
// thread (the keychain may be slow to answer), so that the question
// Compose asks the first time does not come as a surprise.
func (a *accountScreen) checkDrive() {
	may := a.u.deps.May
	a.u.goBackground(func(ctx context.Context) {
		err := may(ctx, auth.Links)
		a.u.do(func() {
			var na *app.NotAllowedError
			switch {
			case err == nil:
				setLabel(a.drive, lang.X("account.drive.allowed", "Google Drive: allowed, for files too large to attach. Carrier reaches only the files it makes there."))
			case errors.As(err, &na):
				setLabel(a.drive, lang.X("account.drive.notyet", "Google Drive: not allowed yet. Carrier asks the first time a message sends a file as a Drive link."))
			default:
				setLabel(a.drive, lang.X("account.drive.unknown", "Google Drive: could not be checked ({{.Error}}).", w{"Error": windowText(err.Error())}))
			}
			a.drive.Show()
		})
	})
}

func (a *accountScreen) signInWith(clientSecret []byte) {
	a.signIn.Disable()
	setLabel(a.status, lang.X("account.browser", "Finish signing in in your browser…"))
	a.u.goBackground(func(ctx context.Context) {
		_, err := a.u.deps.SignIn(ctx, clientSecret)
		a.u.do(func() {
			a.signIn.Enable()
			if err != nil {
				setLabel(a.status, signInFailedWords(err))
				return
			}
			a.status.SetText("")
			a.show()
		})
	})
}

func (a *accountScreen) doSignOut() {
	if err := a.u.deps.SignOut(); err != nil {
		setLabel(a.status, lang.X("account.signout.failed", "Could not sign out: {{.Error}}", w{"Error": windowText(err.Error())}))
		return
	}
	setLabel(a.status, lang.X("account.signedout", "Signed out: messages go to the sandbox on this computer again."))
	a.show()
}

func (a *accountScreen) setChaos(on bool) {
	spec := "none"
	if on {
		spec = chaosFaults
	}
	if err := a.u.deps.SetFaults(spec); err != nil {
		setLabel(a.status, lang.X("account.chaos.failed", "Could not change the sandbox's faults: {{.Error}}", w{"Error": windowText(err.Error())}))
		return
	}
	a.u.app.Preferences().SetBool(prefChaos, on)
	if on {
		setLabel(a.status, lang.X("account.chaos.on", "Chaos mode is on. Watch the Transfers screen."))
	} else {
		setLabel(a.status, lang.X("account.chaos.off", "Chaos mode is off."))
	}
}
