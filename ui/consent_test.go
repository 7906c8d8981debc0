package ui

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/zalando/go-keyring"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/sandbox"
)

// consentBrowser plays the person at the browser for the harness's
// sandbox standing in for Google: it keeps each sign-in address it is
// given, presses the button decision names on the consent page, and
// follows the redirect to Carrier's listener, on its own goroutine as a
// browser would.
type consentBrowser struct {
	mu       sync.Mutex
	decision string       // "allow" or "deny"
	asked    []url.Values // each sign-in address's query, in order
	done     chan error
}

func newConsentBrowser() *consentBrowser {
	return &consentBrowser{decision: "allow", done: make(chan error, 8)}
}

func (b *consentBrowser) decide(d string) { b.mu.Lock(); b.decision = d; b.mu.Unlock() }

func (b *consentBrowser) signIns() []url.Values {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]url.Values(nil), b.asked...)
}

func (b *consentBrowser) open(authURL string) error {
	u, err := url.Parse(authURL)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.asked = append(b.asked, u.Query())
	d := b.decision
	b.mu.Unlock()
	go func() { b.done <- pressOnConsentPage(authURL, d) }()
	return nil
}

var (
	consentFormRE   = regexp.MustCompile(`<form method="post" action="([^"]+)"><input type="hidden" name="id" value="([^"]+)">`)
	consentButtonRE = regexp.MustCompile(`<button id="(allow|deny)" name="decision" value="(allow|deny)">`)
)

func pressOnConsentPage(authURL, decision string) error {
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	u, _ := url.Parse(authURL)
	r, err := noFollow.Get(authURL)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	form := consentFormRE.FindStringSubmatch(string(body))
	pressed := ""
	for _, m := range consentButtonRE.FindAllStringSubmatch(string(body), -1) {
		if m[1] == decision {
			pressed = m[2]
		}
	}
	if form == nil || pressed == "" {
		return fmt.Errorf("no %s button on the consent page: %.500s", decision, body)
	}
	next, _ := u.Parse(html.UnescapeString(form[1]))
	answer := url.Values{"id": {html.UnescapeString(form[2])}, "decision": {pressed}}
	req, _ := http.NewRequest(http.MethodPost, next.String(), strings.NewReader(answer.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	if r, err = noFollow.Do(req); err != nil {
		return err
	}
	r.Body.Close()
	if r.StatusCode != http.StatusFound {
		return errors.New("the consent page did not redirect: " + r.Status)
	}
	r, err = http.Get(r.Header.Get("Location"))
	if err != nil {
		return err
	}
	r.Body.Close()
	return nil
}

// googleHarness is the harness with its sandbox standing in for Google:
// the window's sign-in, grant checks and Allow… are the app's own
// (app.Google), against the sandbox's OAuth, with go-keyring's mock as
// the keychain. Uploads still carry the sandbox's token, so only the
// window's questions depend on the grant.
func googleHarness(t *testing.T) (*harness, *app.Google, *consentBrowser) {
	t.Helper()
	keyring.MockInit()
	b := newConsentBrowser()
	var g *app.Google
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			var err error
			if g, err = app.GoogleAt(nil, d.Endpoint, tok, b.open); err != nil {
				t.Fatal(err)
			}
			d.Account = func() Account {
				if a := g.Address(); a != "" {
					return Account{Address: a}
				}
				return Account{Sandbox: true}
			}
			d.SignIn = func(ctx context.Context, secret []byte) (Account, error) {
				a, err := g.SignIn(ctx, secret)
				return Account{Address: a}, err
			}
			d.SignOut = func() error { return g.SignOut(context.Background()) }
			d.May, d.Allow = g.May, g.Allow
		}
	})
	return h, g, b
}

// signIn signs in through the Account screen, pressing Allow in the
// browser.
func (h *harness) signIn(b *consentBrowser) {
	h.t.Helper()
	a := h.u.account
	a.signInWith([]byte(`{}`))
	h.until("signed in", func() bool { return strings.Contains(a.who.Text, "Signed in as "+sandbox.DefaultAccount) })
	if err := <-b.done; err != nil {
		h.t.Fatal(err)
	}
}

// largeFile is a file over the 25 MB link threshold, of zeros (sparse),
// so a test that never uploads it costs nothing.
func largeFile(t *testing.T, name string, n int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// nothingQueued fails if the journal holds any job, or Drive or Gmail
// any file or message.
func (h *harness) nothingQueued(when string) {
	h.t.Helper()
	if jobs, err := h.q.History(); err != nil || len(jobs) != 0 {
		h.t.Fatalf("%s: the journal holds %d jobs (%v)", when, len(jobs), err)
	}
	if files := h.driveFiles(); len(files) != 0 {
		h.t.Fatalf("%s: Drive holds %+v", when, files)
	}
	if msgs := h.messages(); len(msgs) != 0 {
		h.t.Fatalf("%s: the sandbox holds %d messages", when, len(msgs))
	}
}

func scopeOf(q url.Values) []string { return strings.Fields(q.Get("scope")) }

func hasScope(q url.Values, s string) bool {
	for _, f := range scopeOf(q) {
		if f == s {
			return true
		}
	}
	return false
}

// The window's sign-in asks for sending and drafts, and not for Google
// Drive, Google Photos or the retired Mirror timeline: the grant it makes
// covers neither links nor Photos, which are asked for when first used.
func TestWindowSignInLeavesDriveForLater(t *testing.T) {
	h, g, b := googleHarness(t)
	h.signIn(b)
	asked := b.signIns()
	if len(asked) != 1 {
		t.Fatalf("%d sign-ins", len(asked))
	}
	for _, s := range []string{auth.ScopeGmailSend, auth.ScopeGmailCompose} {
		if !hasScope(asked[0], s) {
			t.Errorf("the sign-in does not ask for %s: %v", s, scopeOf(asked[0]))
		}
	}
	for _, s := range []string{auth.ScopeDriveFile, auth.ScopeTimeline, auth.ScopePhotosAppend, auth.ScopePhotosReadAppCreated} {
		if hasScope(asked[0], s) {
			t.Errorf("the sign-in asks for %s: %v", s, scopeOf(asked[0]))
		}
	}
	acct, err := auth.Load(h.url)
	if err != nil {
		t.Fatal(err)
	}
	if acct.Can(auth.Links) || acct.Can(auth.Photos) || acct.Can(auth.Timeline) || !acct.Can(auth.Send) || !acct.Can(auth.Drafts) {
		t.Errorf("the grant: %v", acct.Scopes())
	}
	var na *app.NotAllowedError
	if err := g.May(context.Background(), auth.Links); !errors.As(err, &na) || na.Kind != auth.Links {
		t.Errorf("May(links) = %v, want a NotAllowedError", err)
	}
	h.until("the Account screen on Drive", func() bool { return h.u.account.drive.Visible() })
	if got := h.u.account.drive.Text; !strings.Contains(got, "not allowed yet. Carrier asks the first time") {
		t.Errorf("the Account screen says %q", got)
	}
}

// Signed in without Drive, Send on a message with a large file asks
// first, and nothing is queued while the question is open; Allow… widens
// the sign-in in the browser (keeping what it allowed, for the same
// account), and the message goes, its large file as a link.
func TestSendAsksForDriveThenSendsOnceAllowed(t *testing.T) {
	h, g, b := googleHarness(t)
	h.signIn(b)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Site plans")
	big := patterned(t, "plans.dwg", 26_000_000)
	small := writeFile(t, "notes.txt", []byte("see the plans"))
	drop(h, big, small)
	test.Tap(c.sendBtn)
	h.until("the question about Drive", func() bool { return c.consent != nil })
	text := c.consent.text.Text
	for _, want := range []string{"plans.dwg is too large for Gmail and goes through your Google Drive as a link", "create files in your Drive; it can reach only the files it makes", "attach the files to the message instead"} {
		if !strings.Contains(text, want) {
			t.Errorf("the question does not say %q: %q", want, text)
		}
	}
	if c.consent.attach == nil || !c.sendBtn.Disabled() || !c.draftBtn.Disabled() {
		t.Fatalf("attach offered %v; send disabled %v, draft disabled %v while asking", c.consent.attach != nil, c.sendBtn.Disabled(), c.draftBtn.Disabled())
	}
	h.nothingQueued("while asking")

	test.Tap(c.consent.allow)
	// While the browser asks, the form holds the message Send was pressed on.
	if !c.to.Disabled() || !c.body.Disabled() || !c.attachBtn.Disabled() || !c.attRows[big].remove.Disabled() || !c.sendBtn.Disabled() {
		t.Error("the form can change while the browser asks")
	}
	h.until("the message sent", func() bool {
		row := h.onlyRow()
		return row != nil && row.state.Text == "Sent"
	})
	if err := <-b.done; err != nil {
		t.Fatal(err)
	}
	asked := b.signIns()
	if len(asked) != 2 {
		t.Fatalf("%d sign-ins, want the first and the one that adds Drive", len(asked))
	}
	wider := asked[1]
	if !hasScope(wider, auth.ScopeDriveFile) || !hasScope(wider, auth.ScopeGmailSend) || wider.Get("include_granted_scopes") != "true" || wider.Get("login_hint") != sandbox.DefaultAccount {
		t.Errorf("the second sign-in asks %v, include_granted_scopes %q, login_hint %q", scopeOf(wider), wider.Get("include_granted_scopes"), wider.Get("login_hint"))
	}
	if err := g.May(context.Background(), auth.Links); err != nil {
		t.Errorf("after Allow: %v", err)
	}
	h.until("the Account screen on Drive", func() bool { return strings.HasPrefix(h.u.account.drive.Text, "Google Drive: allowed") })
	if acct, err := auth.Load(h.url); err != nil || !acct.Can(auth.Send) || !acct.Can(auth.Drafts) {
		t.Errorf("the widened sign-in lost what it allowed: %v", err)
	}
	files := h.driveFiles()
	msgs := h.messages()
	if len(files) != 1 || files[0].Name != "plans.dwg" || len(msgs) != 1 || !strings.Contains(msgs[0].raw, "/file/d/"+files[0].ID+"/view") {
		t.Fatalf("Drive holds %+v; %d messages", files, len(msgs))
	}
	if strings.Join(msgs[0].attachments, ",") != "notes.txt" {
		t.Errorf("attachments %v", msgs[0].attachments)
	}
	if c.to.Text != "" || len(c.attachments) != 0 || c.to.Disabled() || c.attachBtn.Disabled() {
		t.Errorf("the form was not emptied, or stays held, once sent: to %q, %d files, held %v", c.to.Text, len(c.attachments), c.to.Disabled())
	}
}

// A refusal in the browser, or Cancel, leaves the form whole and queues
// nothing; the account stays signed in, still without Drive.
func TestRefusingDriveLeavesTheForm(t *testing.T) {
	h, g, b := googleHarness(t)
	h.signIn(b)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Site plans")
	big := largeFile(t, "plans.dwg", 26_000_000)
	drop(h, big)
	whole := func(when string) {
		t.Helper()
		if c.to.Text != "zoe@example.com" || c.subject.Text != "Site plans" || c.body.Text != "Here it is." || len(c.attachments) != 1 || c.attachments[0] != big {
			t.Fatalf("%s: the form lost the message: to %q subject %q body %q files %v", when, c.to.Text, c.subject.Text, c.body.Text, c.attachments)
		}
		if c.sendBtn.Disabled() || c.consent != nil || c.to.Disabled() || c.attachBtn.Disabled() || c.attRows[big].remove.Disabled() {
			t.Fatalf("%s: send disabled %v, question open %v, form held %v", when, c.sendBtn.Disabled(), c.consent != nil, c.to.Disabled())
		}
		h.nothingQueued(when)
	}

	b.decide("deny")
	test.Tap(c.sendBtn)
	h.until("the question about Drive", func() bool { return c.consent != nil })
	test.Tap(c.consent.allow)
	h.until("the refusal said", func() bool { return strings.HasPrefix(c.status.Text, "Not sent") })
	if err := <-b.done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.status.Text, "not allowed to create files in your Google Drive") || !strings.Contains(c.status.Text, "as you left it") {
		t.Errorf("status %q", c.status.Text)
	}
	whole("after a refusal")
	var na *app.NotAllowedError
	if err := g.May(context.Background(), auth.Links); !errors.As(err, &na) || g.Address() != sandbox.DefaultAccount {
		t.Errorf("after a refusal: May %v, signed in as %q", err, g.Address())
	}

	test.Tap(c.draftBtn) // a draft's files go to Drive as well
	h.until("the question again", func() bool { return c.consent != nil })
	test.Tap(c.consent.cancel)
	whole("after Cancel")
	if n := len(b.signIns()); n != 2 {
		t.Errorf("%d sign-ins: Cancel must not open the browser", n)
	}
}

// Attach instead sends the file attached, with no Drive and no second
// sign-in; a file too large to attach is not offered that, and the
// question says why.
func TestAttachInsteadOfDrive(t *testing.T) {
	h, _, b := googleHarness(t)
	h.signIn(b)
	c := h.u.compose

	h.writeMessage("zoe@example.com", "Too big")
	huge := largeFile(t, "survey.tif", 40_000_000)
	drop(h, huge)
	test.Tap(c.sendBtn)
	h.until("the question about Drive", func() bool { return c.consent != nil })
	if c.consent.attach != nil || !strings.Contains(c.consent.text.Text, "Attached, the files would not fit") {
		t.Errorf("a 40 MB file: attach offered %v; %q", c.consent.attach != nil, c.consent.text.Text)
	}
	test.Tap(c.consent.cancel)
	c.remove(huge)

	h.writeMessage("zoe@example.com", "Scans")
	scan := largeFile(t, "scan.pdf", 26_000_000)
	drop(h, scan)
	test.Tap(c.sendBtn)
	h.until("the question about Drive", func() bool { return c.consent != nil })
	test.Tap(c.consent.attach)
	h.until("the message sent", func() bool {
		row := h.onlyRow()
		return row != nil && (row.state.Text == "Done" || row.state.Text == "Sent")
	})
	msgs := h.messages()
	if len(msgs) != 1 || strings.Join(msgs[0].attachments, ",") != "scan.pdf" || len(h.driveFiles()) != 0 {
		t.Fatalf("%d messages (%v), Drive %+v", len(msgs), msgs, h.driveFiles())
	}
	if n := len(b.signIns()); n != 1 {
		t.Errorf("%d sign-ins", n)
	}
}

// Nobody signed in (the embedded sandbox allows everything), or an
// account that allowed Drive already: Send goes without a question.
func TestDriveAllowedSendsWithoutAsking(t *testing.T) {
	h, g, b := googleHarness(t)
	c := h.u.compose
	send := func(subject string) {
		t.Helper()
		h.writeMessage("zoe@example.com", subject)
		drop(h, patterned(t, subject+".bin", 26_000_000))
		test.Tap(c.sendBtn)
		h.until(subject+" sent", func() bool {
			if c.consent != nil {
				t.Fatalf("%s: asked %q", subject, c.consent.text.Text)
			}
			for _, r := range h.u.transfers.rows {
				if strings.HasPrefix(r.name.Text, subject) && r.state.Text == "Sent" {
					return true
				}
			}
			return false
		})
	}
	send("Sandbox")

	h.signIn(b)
	if err := g.Allow(context.Background(), auth.Links); err != nil {
		t.Fatal(err)
	}
	if err := <-b.done; err != nil {
		t.Fatal(err)
	}
	send("Allowed")
	if n := len(b.signIns()); n != 2 {
		t.Errorf("%d sign-ins", n)
	}
	if files, msgs := h.driveFiles(), h.messages(); len(files) != 2 || len(msgs) != 2 {
		t.Errorf("Drive holds %d files, Gmail %d messages", len(files), len(msgs))
	}
}
