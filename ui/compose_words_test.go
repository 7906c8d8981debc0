package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"carrier/compose"
)

// The address check names the one bad address, in a person's words.
func TestAddressProblemNamesTheBadAddress(t *testing.T) {
	long := strings.Repeat("Someone Else <someone.else@example.com>, ", 30)
	cases := []struct{ list, want string }{
		{"zoe@example.com, bob@, amy@example.com", "'bob@' is not an address: it has nothing after @"},
		{long + "bob@", "'bob@' is not an address: it has nothing after @"},
		{"zoe@example.com, bob", "'bob' is not an address: it has no @"},
		{"@example.com", "'@example.com' is not an address: it has nothing before @"},
		{"a@b@example.com", "'a@b@example.com' is not an address: it has more than one @"},
		{"Bob Smith bob@example.com", "'Bob Smith bob@example.com' is not an address: it has a space in it"},
		{"Bob <bob@example.com", "'Bob <bob@example.com' is not an address: its < has no closing >"},
		{"bob@example..com", "'bob@example..com' is not an address: its part after @ has a dot in the wrong place"},
		{"zoë@exämple.com", "'zoë@exämple.com' has letters email cannot carry"},
		{"zoe@example.com, gina@example", "'gina@example' lacks the end of its domain, such as .com"},
		{"\"Doe, Jane\" <jane@example.com>, Bob <bob@", "'Bob <bob@' is not an address: its < has no closing >"},
	}
	for _, c := range cases {
		err := addressProblem(c.list)
		if err == nil {
			t.Errorf("%q passed", c.list)
			continue
		}
		got := err.Error()
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want it to start %q", c.list, got, c.want)
		}
		if strings.Contains(got, "mail:") || strings.Contains(got, "angle-addr") || len(got) > 160 {
			t.Errorf("%q: %q has Go's words or the whole list", c.list, got)
		}
	}
	for _, ok := range []string{"", "zoe@example.com", "\"Doe, Jane\" <jane@example.com>, bob@example.com", long + "bob@example.com"} {
		if err := addressProblem(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
		if _, problems := compose.ParseAddresses("To", []string{ok}); len(problems) > 0 {
			t.Errorf("%q passes here but not in the message's check: %v", ok, problems)
		}
	}
}

// While an invalid list is typed the field shows no tick; once the field
// is left, the line under it names the bad address; it goes as soon as
// the address is mended, focus still in the field.
func TestComposeAddressErrorComesAndGoes(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	cv := h.w.Canvas()
	tick := func() bool { return strings.Contains(test.RenderObjectToMarkup(c.to), `rsc="confirmIcon"`) }
	cv.Focus(c.to)
	test.Type(c.to, "zoe@example.com")
	if !tick() {
		t.Fatal("a valid address shows no tick")
	}
	test.Type(c.to, ", bob@")
	if tick() {
		t.Fatal("a tick beside an invalid list")
	}
	if text := labelsIn(c.form); strings.Contains(text, "not an address") {
		t.Fatalf("the problem shows while the address is still being typed:\n%s", text)
	}
	cv.Focus(c.subject)
	var problem string
	for _, line := range strings.Split(labelsIn(c.form), "\n") {
		if strings.Contains(line, "not an address") {
			problem = line
		}
	}
	if problem != "'bob@' is not an address: it has nothing after @" {
		t.Fatalf("the problem after leaving the field: %q\n%s", problem, labelsIn(c.form))
	}
	cv.Focus(c.to)
	test.Type(c.to, "example.com")
	if text := labelsIn(c.form); strings.Contains(text, "not an address") {
		t.Fatalf("the problem stays once mended:\n%s", text)
	}
	if !tick() || c.sendBtn.Disabled() {
		t.Fatalf("mended: tick %v, Send disabled %v", tick(), c.sendBtn.Disabled())
	}
}

// "Add a recipient" goes as soon as there is one.
func TestComposeRecipientLineGoesWhenMended(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	c.subject.SetText("Hello")
	test.Tap(c.sendBtn)
	if !c.status.Visible() || !strings.Contains(c.status.Text, "add at least one recipient") {
		t.Fatalf("no recipient: status %q shown %v", c.status.Text, c.status.Visible())
	}
	h.w.Canvas().Focus(c.to)
	test.Type(c.to, "zoe@example.com")
	if c.status.Visible() || c.status.Text != "" {
		t.Fatalf("with a recipient the status still reads %q", c.status.Text)
	}
}

// The meter shows the size the message would have, an empty one's too,
// and by how much a message is over, in the error colour.
func TestComposeMeterShowsTheTrueSize(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	c.to.SetText("zoe@example.com")
	m := &compose.Message{To: []string{"zoe@example.com"}}
	var n countWriter
	if err := m.WriteTo(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if want := humanSize(int64(n)); !strings.HasPrefix(c.meterText, want+" of ") {
		t.Fatalf("an empty message (%d bytes written) reads %q", n, c.meterText)
	}
	if c.attHeading.Text != "Attachments" {
		t.Fatalf("heading %q with none", c.attHeading.Text)
	}
	dir := t.TempDir()
	var files []string
	for _, size := range []int64{20 << 20, 20 << 20} {
		p := filepath.Join(dir, "part"+string(rune('a'+len(files)))+".bin")
		f, _ := os.Create(p)
		f.Truncate(size)
		f.Close()
		files = append(files, p)
	}
	c.attach(files[0])
	if c.attHeading.Text != "1 attachment" {
		t.Fatalf("heading %q", c.attHeading.Text)
	}
	c.attach(files[1])
	if c.attHeading.Text != "2 attachments" {
		t.Fatalf("heading %q", c.attHeading.Text)
	}
	for _, p := range files { // both attached by choice: 40 MiB, base64
		if strings.HasPrefix(c.attRows[p].how.Text, "Drive") {
			test.Tap(c.attRows[p].toggle)
		}
	}
	est := c.estimate()
	want := humanSize(est) + ", over the 35.0 MiB limit by " + humanSize(est-compose.LimitSend)
	if c.meterText != want || !c.meter.over {
		t.Fatalf("over the limit: %q (error colour %v), want %q", c.meterText, c.meter.over, want)
	}
	before := c.meter.over
	c.remove(files[1])
	if c.meter.over || !strings.Contains(c.meterText, " of 35.0 MiB") || !before {
		t.Fatalf("back under: %q, error colour %v", c.meterText, c.meter.over)
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
