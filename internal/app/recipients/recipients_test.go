package recipients

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

func suggested(rs []Recipient) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	return out
}

// Addresses sent to are offered for two letters of a word of their name
// or address, most used first, per account, the account's own too; Forget
// removes one; the file is private.
func TestRecipientsRemembered(t *testing.T) {
	state := t.TempDir()
	r := OpenAddressBook(state)
	clock := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	r.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	if err := r.Remember("me@example.com", "Zoe Park <zoe@example.com>, bob@example.com", "zora@example.org", ""); err != nil {
		t.Fatal(err)
	}
	if err := r.Remember("me@example.com", "zora@example.org"); err != nil {
		t.Fatal(err)
	}
	if got := suggested(r.Suggest("me@example.com", "zo", 5)); !slices.Equal(got, []string{"zora@example.org", `"Zoe Park" <zoe@example.com>`}) {
		t.Fatalf("zo offers %q: want the most used first", got)
	}
	if got := suggested(r.Suggest("ME@example.com", "pa", 5)); !slices.Equal(got, []string{`"Zoe Park" <zoe@example.com>`}) {
		t.Fatalf("pa (a word of a name) offers %q", got)
	}
	if got := r.Suggest("me@example.com", "z", 5); got != nil {
		t.Fatalf("one letter offers %v", got)
	}
	if got := suggested(r.Suggest("me@example.com", "me", 5)); !slices.Equal(got, []string{"me@example.com"}) {
		t.Fatalf("the account's own address: %q", got)
	}
	if got := r.Suggest("other@example.com", "zo", 5); got != nil {
		t.Fatalf("another account is offered %v", got)
	}
	if err := r.Forget("me@example.com", "ZORA@example.org"); err != nil {
		t.Fatal(err)
	}
	if got := suggested(OpenAddressBook(state).Suggest("me@example.com", "zo", 5)); !slices.Equal(got, []string{`"Zoe Park" <zoe@example.com>`}) {
		t.Fatalf("after Forget, zo offers %q", got)
	}
	if fi, err := os.Stat(AddressBookPath(state)); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file is not private: %v %v", fi, err)
	}
}

// A damaged file is neither read nor overwritten.
func TestRecipientsLeaveADamagedFileAlone(t *testing.T) {
	state := t.TempDir()
	os.WriteFile(AddressBookPath(state), []byte("{not json"), 0o600)
	r := OpenAddressBook(state)
	if err := r.Remember("me@example.com", "zoe@example.com"); err == nil {
		t.Fatal("remembered into a damaged file")
	}
	if b, _ := os.ReadFile(AddressBookPath(state)); string(b) != "{not json" {
		t.Fatalf("the damaged file was overwritten: %q", b)
	}
}
