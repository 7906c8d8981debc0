package recipients

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"carrier/internal/platform"
)

// Recipients remembered: the addresses a person sent to from each
// account (and the accounts' own), kept in one private file beside the
// journal and never sent anywhere, offered most used first as they type
// in To, Cc and Bcc. A person's Forget removes one for good (until they
// send to it again).

// recipientsVersion changes when the file's meaning does.
const recipientsVersion = 1

// Recipient is an address as it was last written, and how much it was used.
type Recipient struct {
	Address string    `json:"address"` // the address alone, as written ("zoe@example.com")
	Name    string    `json:"name,omitempty"`
	Count   int       `json:"count"`
	Last    time.Time `json:"last"`
}

// String is the recipient as a To field takes it: "Name <address>", or the
// address alone.
func (r Recipient) String() string {
	if r.Name == "" {
		return r.Address
	}
	return (&mail.Address{Name: r.Name, Address: r.Address}).String()
}

type recipientsFile struct {
	Version  int                    `json:"version"`
	Accounts map[string][]Recipient `json:"accounts"` // by the sending account's address ("" the sandbox's)
}

// AddressBook is the store. Its methods are safe for concurrent use; the
// file is read on each call, so two Carrier processes see each other's
// remembering (the last write wins a race, which can lose one count).
type AddressBook struct {
	path string
	mu   sync.Mutex
	now  func() time.Time
}

// AddressBookPath is the store's file under the state folder.
func AddressBookPath(stateDir string) string { return filepath.Join(stateDir, "recipients.json") }

// OpenAddressBook is the store of the state folder.
func OpenAddressBook(stateDir string) *AddressBook {
	return &AddressBook{path: AddressBookPath(stateDir), now: time.Now}
}

func (r *AddressBook) load() (recipientsFile, error) {
	f := recipientsFile{Version: recipientsVersion, Accounts: map[string][]Recipient{}}
	data, err := platform.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Version != recipientsVersion {
		return f, fmt.Errorf("the remembered recipients (%s) cannot be read; they are left as they are", r.path)
	}
	if f.Accounts == nil {
		f.Accounts = map[string][]Recipient{}
	}
	return f, nil
}

func (r *AddressBook) save(f recipientsFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	return platform.WriteFile(r.path, data)
}

// bookKey is how an account is filed: its address in lower case.
func bookKey(account string) string { return strings.ToLower(strings.TrimSpace(account)) }

// Remember counts each address of fields (To, Cc and Bcc as written:
// "Zoe <zoe@example.com>, bob@example.com") as sent to from account, and
// account's own address as known. An unreadable file is left alone.
func (r *AddressBook) Remember(account string, fields ...string) error {
	var addrs []*mail.Address
	for _, field := range fields {
		if strings.TrimSpace(field) == "" {
			continue
		}
		list, err := mail.ParseAddressList(field)
		if err != nil {
			continue // Compose checked them; nothing half-read is kept
		}
		addrs = append(addrs, list...)
	}
	own, ownErr := mail.ParseAddress(account)
	if len(addrs) == 0 && ownErr != nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := r.load()
	if err != nil {
		return err
	}
	now := r.now().UTC().Round(0)
	list := f.Accounts[bookKey(account)]
	find := func(address string) int {
		at := slices.IndexFunc(list, func(x Recipient) bool { return strings.EqualFold(x.Address, address) })
		if at < 0 {
			list = append(list, Recipient{Address: address})
			at = len(list) - 1
		}
		return at
	}
	for _, a := range addrs {
		at := find(a.Address)
		list[at].Count++
		list[at].Last = now
		if a.Name != "" {
			list[at].Name = a.Name
		}
	}
	if ownErr == nil {
		find(own.Address) // the account's own: offered, counted only when sent to
	}
	f.Accounts[bookKey(account)] = list
	return r.save(f)
}

// Suggest are the remembered recipients of account whose address or name
// has a word beginning with typed (at least two letters, any case), most
// used first, then the most recent; at most n.
func (r *AddressBook) Suggest(account, typed string, n int) []Recipient {
	typed = strings.ToLower(strings.TrimSpace(typed))
	if len([]rune(typed)) < 2 || n <= 0 {
		return nil
	}
	r.mu.Lock()
	f, err := r.load()
	r.mu.Unlock()
	if err != nil {
		return nil
	}
	var out []Recipient
	for _, rc := range f.Accounts[bookKey(account)] {
		if recipientMatches(rc, typed) {
			out = append(out, rc)
		}
	}
	slices.SortStableFunc(out, func(a, b Recipient) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return b.Last.Compare(a.Last)
	})
	return out[:min(n, len(out))]
}

// recipientMatches reports whether a word of the recipient's name or address
// begins with typed (lower case).
func recipientMatches(r Recipient, typed string) bool {
	words := strings.FieldsFunc(strings.ToLower(r.Name+" "+r.Address), func(c rune) bool {
		return c == ' ' || c == '.' || c == '@' || c == '-' || c == '_' || c == '+'
	})
	if strings.HasPrefix(strings.ToLower(r.Address), typed) {
		return true
	}
	for _, w := range words {
		if strings.HasPrefix(w, typed) {
			return true
		}
	}
	return false
}

// Forget removes address from account's remembered recipients.
func (r *AddressBook) Forget(account, address string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := r.load()
	if err != nil {
		return err
	}
	list := f.Accounts[bookKey(account)]
	kept := slices.DeleteFunc(slices.Clone(list), func(x Recipient) bool { return strings.EqualFold(x.Address, address) })
	if len(kept) == len(list) {
		return nil
	}
	f.Accounts[bookKey(account)] = kept
	return r.save(f)
}
