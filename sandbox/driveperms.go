package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

type drivePermRec struct {
	ID             string    `json:"id"`
	Type           string    `json:"type"`
	Role           string    `json:"role"`
	Email          string    `json:"email,omitempty"`
	Domain         string    `json:"domain,omitempty"`
	AllowDiscovery bool      `json:"allowDiscovery,omitempty"`
	Expires        time.Time `json:"expires,omitempty"`
	Notified       bool      `json:"notified,omitempty"` // a mail would have gone to the grantee
}

func (p *drivePermRec) live(now time.Time) bool { return p.Expires.IsZero() || now.Before(p.Expires) }

func permKey(fileID, permID string) string { return fileID + "/" + permID }

// grantID is the permission id of a grantee: Drive's ids name the person
// (or group, or domain), the same on every file.
func grantID(kind, who string) string {
	sum := sha256.Sum256([]byte(kind + ":" + strings.ToLower(who)))
	return fmt.Sprintf("%020d", binary.BigEndian.Uint64(sum[:8]))
}

// filePerms are a file's live permissions, the owner's first.
func (s *Sandbox) filePerms(tx *bolt.Tx, fileID string) []*drivePermRec {
	out := []*drivePermRec{{ID: grantID("user", s.opts.Account), Type: "user", Role: "owner", Email: s.opts.Account}}
	c := tx.Bucket(bDrivePerms).Cursor()
	prefix := []byte(fileID + "/")
	for k, v := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, v = c.Next() {
		p := new(drivePermRec)
		if json.Unmarshal(v, p) == nil && p.live(s.now()) {
			out = append(out, p)
		}
	}
	return out
}

func (p *drivePermRec) resource() map[string]any {
	r := map[string]any{"kind": "drive#permission", "id": p.ID, "type": p.Type, "role": p.Role}
	switch p.Type {
	case "user", "group":
		r["emailAddress"], r["displayName"], r["deleted"] = p.Email, p.Email, false
		if p.Type == "user" {
			r["pendingOwner"] = false
		}
	case "domain":
		r["domain"], r["displayName"], r["allowFileDiscovery"] = p.Domain, p.Domain, p.AllowDiscovery
	case "anyone":
		r["allowFileDiscovery"] = p.AllowDiscovery
	}
	if !p.Expires.IsZero() {
		r["expirationTime"] = driveTime(p.Expires)
	}
	return r
}

// permission create and list

type permissionIn struct {
	Type               string `json:"type"`
	Role               string `json:"role"`
	EmailAddress       string `json:"emailAddress"`
	Domain             string `json:"domain"`
	AllowFileDiscovery bool   `json:"allowFileDiscovery"`
	ExpirationTime     string `json:"expirationTime"`
}

func (s *Sandbox) newPermission(r *http.Request, raw json.RawMessage) (*drivePermRec, *apiError) {
	var in permissionIn
	if len(raw) == 0 {
		return nil, errorf(400, "required", "The permission type field is required.")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, errorf(400, "parseError", "The body is not a Permission: %v", err)
	}
	p := &drivePermRec{Type: in.Type, Role: in.Role}
	switch in.Type {
	case "":
		return nil, errorf(400, "required", "The permission type field is required.")
	case "user", "group":
		if in.EmailAddress == "" {
			return nil, errorf(400, "required", "The permission emailAddress field is required for type %s.", in.Type)
		}
		a, err := mail.ParseAddress(in.EmailAddress)
		if err != nil || a.Address != in.EmailAddress || !strings.Contains(a.Address, "@") {
			return nil, errorf(400, "invalid", "Invalid emailAddress %q.", in.EmailAddress)
		}
		p.Email, p.ID = in.EmailAddress, grantID(in.Type, in.EmailAddress)
	case "domain":
		if in.Domain == "" || strings.ContainsAny(in.Domain, "@/ ") || !strings.Contains(in.Domain, ".") {
			return nil, errorf(400, "required", "The permission domain field is required (a domain name) for type domain.")
		}
		p.Domain, p.AllowDiscovery, p.ID = strings.ToLower(in.Domain), in.AllowFileDiscovery, grantID("domain", in.Domain)
	case "anyone":
		p.AllowDiscovery, p.ID = in.AllowFileDiscovery, "anyoneWithLink"
		if in.AllowFileDiscovery {
			p.ID = "anyone"
		}
	default:
		return nil, errorf(400, "invalid", "Invalid permission type %q: use user, group, domain or anyone.", in.Type)
	}
	switch in.Role {
	case "reader", "commenter", "writer":
	case "":
		return nil, errorf(400, "required", "The permission role field is required.")
	case "owner", "organizer", "fileOrganizer":
		return nil, errorf(400, "invalid", "The sandbox's Drive does not grant role %s: use reader, commenter or writer.", in.Role)
	default:
		return nil, errorf(400, "invalid", "Invalid permission role %q: use reader, commenter or writer.", in.Role)
	}
	if (in.Type == "user" || in.Type == "group") && in.AllowFileDiscovery {
		return nil, errorf(400, "invalid", "allowFileDiscovery applies only to permissions of type domain or anyone.")
	}
	if in.ExpirationTime != "" {
		if in.Type != "user" && in.Type != "group" {
			return nil, errorf(400, "cannotSetExpirationOnAnyoneOrDomain", "Expiration dates cannot be set on permissions of type %s, only on user and group permissions.", in.Type)
		}
		t, err := time.Parse(time.RFC3339Nano, in.ExpirationTime)
		if err != nil {
			return nil, errorf(400, "invalid", "Invalid expirationTime %q: an RFC 3339 date-time such as 2030-01-31T12:00:00Z.", in.ExpirationTime)
		}
		now := s.now()
		switch {
		case !t.After(now):
			return nil, errorf(400, "expirationDatesMustBeInTheFuture", "Expiration dates must be in the future.")
		case t.After(now.AddDate(1, 0, 0)):
			return nil, errorf(400, "invalid", "Expiration dates cannot be more than a year in the future.")
		}
		p.Expires = t.UTC()
	}
	notify := in.Type == "user" || in.Type == "group"
	if v := r.URL.Query().Get("sendNotificationEmail"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, errorf(400, "invalid", "Invalid value for sendNotificationEmail: %q.", v)
		}
		if b && !notify {
			return nil, errorf(400, "invalid", "sendNotificationEmail applies only to user and group permissions.")
		}
		notify = b
	}
	p.Notified = notify
	return p, nil
}

func (s *Sandbox) serveCreatePermission(w http.ResponseWriter, r *http.Request) {
	sel, e := selection(r.URL.Query().Get("fields"), drivePermissionSchema, defaultPermissionFields)
	if e != nil {
		writeError(w, e)
		return
	}
	raw, e := readMetadata(r.Body)
	if e != nil {
		writeError(w, e)
		return
	}
	p, e := s.newPermission(r, raw)
	if e != nil {
		writeError(w, e)
		return
	}
	id := r.PathValue("fileId")
	if !s.update(w, func(tx *bolt.Tx) *apiError {
		f, e := s.getFile(tx, id)
		if e != nil {
			return e
		}
		if p.ID == grantID("user", s.opts.Account) {
			return errorf(403, "cannotChangeOwnerAcl", "The owner's permission cannot be changed this way.")
		}
		f.Version++
		if err := putJSON(tx, bDriveFiles, f.ID, f); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		// Drive's permission id names the grantee: a second grant to the
		// same one replaces the first (the last applies).
		if err := putJSON(tx, bDrivePerms, permKey(f.ID, p.ID), p); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(p.resource()))
}

func (s *Sandbox) serveListPermissions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel, e := selection(q.Get("fields"), drivePermissionListSchema, defaultPermListFields)
	if e != nil {
		writeError(w, e)
		return
	}
	var out map[string]any
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		f, e := s.getFile(tx, r.PathValue("fileId"))
		if e != nil {
			return e
		}
		perms := s.filePerms(tx, f.ID)
		start, end, next, e := pageBounds(q, len(perms), 100, 100)
		if e != nil {
			return e
		}
		list := []map[string]any{}
		for _, p := range perms[start:end] {
			list = append(list, p.resource())
		}
		out = map[string]any{"kind": "drive#permissionList", "permissions": list}
		if next != "" {
			out["nextPageToken"] = next
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(out))
}

func (s *Sandbox) findPermission(tx *bolt.Tx, r *http.Request) (*driveFileRec, *drivePermRec, *apiError) {
	f, e := s.getFile(tx, r.PathValue("fileId"))
	if e != nil {
		return nil, nil, e
	}
	for _, p := range s.filePerms(tx, f.ID) {
		if p.ID == r.PathValue("permissionId") {
			return f, p, nil
		}
	}
	return nil, nil, errorf(http.StatusNotFound, "notFound", "Permission not found: %s.", r.PathValue("permissionId"))
}

func (s *Sandbox) serveGetPermission(w http.ResponseWriter, r *http.Request) {
	sel, e := selection(r.URL.Query().Get("fields"), drivePermissionSchema, defaultPermissionFields)
	if e != nil {
		writeError(w, e)
		return
	}
	var p *drivePermRec
	if s.view(w, func(tx *bolt.Tx) *apiError { _, p, e = s.findPermission(tx, r); return e }) {
		writeJSON(w, http.StatusOK, sel.apply(p.resource()))
	}
}

func (s *Sandbox) serveDeletePermission(w http.ResponseWriter, r *http.Request) {
	if s.update(w, func(tx *bolt.Tx) *apiError {
		f, p, e := s.findPermission(tx, r)
		if e != nil {
			return e
		}
		if p.Role == "owner" {
			return errorf(403, "cannotRemoveOwner", "The owner of a file cannot be removed.")
		}
		f.Version++
		if err := putJSON(tx, bDriveFiles, f.ID, f); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		if err := tx.Bucket(bDrivePerms).Delete([]byte(permKey(f.ID, p.ID))); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		w.WriteHeader(http.StatusNoContent)
	}
}
