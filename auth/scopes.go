package auth

import (
	"fmt"
	"slices"
	"strings"
)

// The scopes Carrier may ask for. Each is the narrowest Google offers for
// its kind of work, so a person grants no more than the work needs.
const (
	ScopeGmailSend    = "https://www.googleapis.com/auth/gmail.send"
	ScopeGmailCompose = "https://www.googleapis.com/auth/gmail.compose"
	ScopeGmailInsert  = "https://www.googleapis.com/auth/gmail.insert"
	ScopeTimeline     = "https://www.googleapis.com/auth/glass.timeline"
	// ScopeDriveFile reaches only the Drive files Carrier made: the files
	// it links to from messages. Google counts it as non-sensitive.
	ScopeDriveFile = "https://www.googleapis.com/auth/drive.file"
	scopeDrive     = "https://www.googleapis.com/auth/drive"
	// ScopePhotosAppend lets Carrier upload to Google Photos and make
	// albums, and nothing else there: it reads no one's photos.
	ScopePhotosAppend = "https://www.googleapis.com/auth/photoslibrary.appendonly"
	// ScopePhotosReadAppCreated lets Carrier list the albums it made, so
	// that it adds to one rather than making a second of the same title;
	// it reads nothing Carrier did not make.
	ScopePhotosReadAppCreated = "https://www.googleapis.com/auth/photoslibrary.readonly.appcreateddata"

	scopeGmailModify = "https://www.googleapis.com/auth/gmail.modify"
	scopeMailFull    = "https://mail.google.com/"
)

// Kind is a kind of work that needs Google's permission.
type Kind string

const (
	Send     Kind = "send"     // Gmail messages.send
	Drafts   Kind = "drafts"   // Gmail drafts.create, drafts.update, drafts.send
	Insert   Kind = "insert"   // Gmail messages.insert and messages.import
	Timeline Kind = "timeline" // Mirror timeline items and their attachments
	Links    Kind = "links"    // Drive: files too large to attach, uploaded and shared as links
	Photos   Kind = "photos"   // Google Photos: pictures and videos uploaded, albums made
)

// Kinds lists every kind, in the order they are shown to people.
var Kinds = []Kind{Send, Drafts, Insert, Timeline, Links, Photos}

// kindScopes maps each kind to the scope asked for first, then to the
// broader ones Google also accepts for that work (a grant made for another
// app or an earlier sign-in may hold one of those).
var kindScopes = map[Kind][]string{
	Send:     {ScopeGmailSend, ScopeGmailCompose, scopeGmailModify, scopeMailFull},
	Drafts:   {ScopeGmailCompose, scopeGmailModify, scopeMailFull},
	Insert:   {ScopeGmailInsert, scopeGmailModify, scopeMailFull},
	Timeline: {ScopeTimeline},
	Links:    {ScopeDriveFile, scopeDrive},
	Photos:   {ScopePhotosAppend},
}

// kindAlso are scopes a kind needs besides one of kindScopes': asked
// for with it, and a grant without them does not cover the kind.
var kindAlso = map[Kind][]string{
	Photos: {ScopePhotosReadAppCreated},
}

// ScopesFor returns the scopes to ask for so that all the kinds of work
// given can be done, without duplicates, sorted.
func ScopesFor(kinds ...Kind) ([]string, error) {
	var out []string
	for _, k := range kinds {
		s, ok := kindScopes[k]
		if !ok {
			return nil, fmt.Errorf("unknown kind of work %q: use one of %s", k, kindList())
		}
		out = append(out, s[0])
		out = append(out, kindAlso[k]...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ParseKinds reads a comma-separated list such as "send,timeline".
func ParseKinds(s string) ([]Kind, error) {
	var kinds []Kind
	for f := range strings.SplitSeq(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if _, ok := kindScopes[Kind(f)]; !ok {
			return nil, fmt.Errorf("unknown kind of work %q: use one or more of %s, separated by commas", f, kindList())
		}
		kinds = append(kinds, Kind(f))
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("no kind of work given: use one or more of %s, separated by commas", kindList())
	}
	return kinds, nil
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// covers reports whether granted holds a scope Google accepts for kind.
func covers(granted []string, kind Kind) bool {
	for _, s := range kindAlso[kind] {
		if !slices.Contains(granted, s) {
			return false
		}
	}
	for _, s := range kindScopes[kind] {
		if slices.Contains(granted, s) {
			return true
		}
	}
	return false
}

// ScopeWords says, for each scope Carrier may ask for, what it lets
// Carrier do, in the words the set-up assistant shows before consent.
var ScopeWords = []struct{ Scope, Allows string }{
	{ScopeGmailSend, "send mail as you; Carrier cannot read your mail with it"},
	{ScopeGmailCompose, "make, change and send drafts (asked for when you save a draft)"},
	{ScopeGmailInsert, "put messages into your mailbox without sending them (carrier send --as insert or import)"},
	{ScopeDriveFile, "upload files too large to attach to your Drive and share them as links; only the files Carrier made, none of your others"},
	{ScopePhotosAppend, "add pictures and videos to Google Photos and make albums; it reads none of your photos"},
	{ScopeTimeline, "post to the Mirror timeline"},
	{"openid email", "learn your address, to name the account"},
}
