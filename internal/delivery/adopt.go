package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"carrier/transfer"
)

// Adopt makes deliveries of the jobs among snaps that have no owner
// (journals from before deliveries): the jobs joined by what they need
// (a message and its Drive uploads and shares; a Photos batch's uploads,
// album and calls) are one delivery, each job's role and the delivery's
// kind read off their URLs (RouteOf). Jobs with an owner are left out. A
// delivery's id follows from its top job (the one nothing needs), so two
// Carriers adopting the same journal make the same deliveries. Oldest
// first.
func Adopt(snaps []transfer.Snapshot) []Delivery {
	byID := map[string]int{}
	var jobs []transfer.Snapshot
	for _, s := range snaps {
		if s.Owner == "" && s.ID != "" {
			if _, dup := byID[s.ID]; !dup {
				byID[s.ID] = len(jobs)
				jobs = append(jobs, s)
			}
		}
	}
	// Union-find over the jobs, joined by their needs.
	parent := make([]int, len(jobs))
	for i := range parent {
		parent[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	needed := map[string]bool{}
	for i, j := range jobs {
		for _, n := range j.Needs {
			if k, ok := byID[n]; ok {
				parent[root(i)] = root(k)
				needed[n] = true
			}
		}
	}
	groups := map[int][]transfer.Snapshot{}
	for i, j := range jobs {
		r := root(i)
		groups[r] = append(groups[r], j)
	}
	var out []Delivery
	for _, g := range groups {
		out = append(out, adoptGroup(g, needed))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// adoptGroup is the delivery of one group of jobs joined by their needs.
func adoptGroup(g []transfer.Snapshot, needed map[string]bool) Delivery {
	sort.SliceStable(g, func(i, j int) bool {
		if !g[i].Created.Equal(g[j].Created) {
			return g[i].Created.Before(g[j].Created)
		}
		return g[i].ID < g[j].ID
	})
	// The top: the newest job nothing needs (a message, a batch's last
	// call, an upload alone).
	top := g[len(g)-1]
	for i := len(g) - 1; i >= 0; i-- {
		if !needed[g[i].ID] {
			top = g[i]
			break
		}
	}
	sum := sha256.Sum256([]byte(top.ID))
	d := Delivery{ID: "d-" + hex.EncodeToString(sum[:16]), Created: g[0].Created, Account: top.Account, Label: top.Label, Kind: KindOf(top.URL)}
	for _, j := range g {
		m := MemberOf(j.ID, j.URL, j.Path)
		role := m.Role
		d.Members = append(d.Members, m)
		switch role {
		case RoleMessage:
			if d.DraftID == "" {
				d.DraftID = draftOf(j)
			}
		case RoleAlbum:
			var a struct{ ID, Title string }
			if j.Response != nil && json.Unmarshal(j.Response.Body, &a) == nil {
				d.AlbumID, d.Album = a.ID, a.Title
			}
		case RoleItems:
			var b struct {
				AlbumID string `json:"albumId"`
			}
			if d.AlbumID == "" && json.Unmarshal(j.Metadata, &b) == nil {
				d.AlbumID = b.AlbumID
			}
		}
	}
	return d
}

// KindOf is the kind of a delivery whose top job (the one nothing of it
// needs: the message, a batch's last call, the upload) goes to jobURL.
func KindOf(jobURL string) Kind {
	r := RouteOf(jobURL)
	switch {
	case savesDraft(r):
		return KindDraft
	case roleOf(r) == RoleMessage:
		return KindMessage
	case strings.HasPrefix(r.Kind, "photos."):
		return KindPhotos
	}
	return KindUpload
}

// MemberOf is job as a member: its role is the route of its URL's (the
// app queues every job at a URL of the one route table), and a member
// that uploads a person's file names it.
func MemberOf(job, jobURL, path string) Member {
	m := Member{Job: job, Role: roleOf(RouteOf(jobURL))}
	if m.Role == RoleDriveFile || m.Role == RolePhoto || m.Role == RoleUpload {
		m.File = path
	}
	return m
}

// MemberIn is job s as a member of its delivery d (the stored one, which
// names its members and their roles): the member d holds. A job d does
// not name (one that joins it: Reconcile), or with no delivery stored (d
// nil: a journal from before deliveries, or a job seen before its
// delivery was read), is read off its URL as Adopt reads it (MemberOf):
// that guess is made here alone.
func MemberIn(d *Delivery, s transfer.Snapshot) Member {
	if d != nil {
		if m, ok := d.Member(s.ID); ok && m.Role.valid() {
			return m
		}
	}
	return MemberOf(s.ID, s.URL, s.Path)
}

// RoleOf is the part job s plays in its delivery d (MemberIn).
func RoleOf(d *Delivery, s transfer.Snapshot) Role { return MemberIn(d, s).Role }

// draftOf is the draft a message job updates, sends or saved: from its
// URL (drafts.update), its metadata (drafts.send) or Gmail's answer
// (drafts.create, once done).
func draftOf(j transfer.Snapshot) string {
	var m struct{ ID string }
	switch r := RouteOf(j.URL); r {
	case RouteDraftUpdate:
		u, err := url.Parse(j.URL)
		if err != nil {
			return ""
		}
		segs := strings.Split(strings.TrimSuffix(u.EscapedPath(), "/"), "/")
		id, err := url.PathUnescape(segs[len(segs)-1])
		if err != nil {
			return ""
		}
		return id
	case RouteDraftSend:
		json.Unmarshal(j.Metadata, &m)
	case RouteDraft:
		if j.Response != nil {
			json.Unmarshal(j.Response.Body, &m)
		}
	}
	return m.ID
}

// Of is every delivery of a journal (snaps: its jobs, finished ones too):
// the stored ones checked against the jobs (Reconcile: members gone are
// dropped, owned jobs not listed join), a delivery for the owned jobs
// whose delivery is not stored (its file lost, or never written by a
// process that died between queuing and storing), grouped by their owner
// and read as Adopt reads a group, and Adopt's for the jobs with no
// owner. A stored delivery none of whose jobs remain is left out. Oldest
// first.
func Of(snaps []transfer.Snapshot, stored []Delivery) []Delivery {
	byID := make(map[string]transfer.Snapshot, len(snaps))
	owned := map[string][]transfer.Snapshot{}
	for _, s := range snaps {
		byID[s.ID] = s
		if s.Owner != "" {
			owned[s.Owner] = append(owned[s.Owner], s)
		}
	}
	var out []Delivery
	for _, d := range stored {
		nd, f := Reconcile(d, byID)
		delete(owned, d.ID)
		if !f.Empty {
			out = append(out, nd)
		}
	}
	for owner, g := range owned {
		needed := map[string]bool{}
		for _, j := range g {
			for _, n := range j.Needs {
				needed[n] = true
			}
		}
		d := adoptGroup(g, needed)
		d.ID = owner
		out = append(out, d)
	}
	out = append(out, Adopt(snaps)...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
