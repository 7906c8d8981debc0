package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"

	"carrier/internal/delivery"
	"carrier/internal/gapi"
	"carrier/transfer"
)

// A message and the jobs it needs, found from the journal's jobs alone
// (`carrier jobs` lists them so), and the files a cancelled message's
// uploads left on Drive, which are the person's to keep or delete.
// Cancelling itself is a delivery's verb (act.go).

// Graph is a message and the jobs it needs (its Drive uploads and their
// shares), or a job alone.
type Graph struct {
	Msg   transfer.Snapshot
	Parts []transfer.Snapshot // in the order the message names them
}

// GraphOf finds among jobs (a journal's, finished ones too) the graph id
// is in: id's own, or that of the message that needs it. A part of
// several messages (none today) belongs to the first. Each call indexes
// jobs afresh; a caller asking for many graphs of one list builds a
// Graphs once.
func GraphOf(jobs []transfer.Snapshot, id string) (Graph, error) {
	return NewGraphs(jobs).Of(id)
}

// Graphs indexes a list of jobs once (by id, and who needs whom), so
// finding the graph of each of n jobs costs what the graphs hold, not
// n passes over the list: `carrier jobs` over a Photos batch of 20,000
// uploads and their 400 calls.
type Graphs struct {
	jobs     []transfer.Snapshot
	byID     map[string]int   // index in jobs
	neededBy map[string]int   // the first job (in list order) that needs this one
	firstOf  map[string][]int // jobs whose first need is this one (a share's upload), in list order
}

// NewGraphs indexes jobs.
func NewGraphs(jobs []transfer.Snapshot) *Graphs {
	x := &Graphs{jobs: jobs, byID: make(map[string]int, len(jobs)), neededBy: map[string]int{}, firstOf: map[string][]int{}}
	for i, j := range jobs {
		x.byID[j.ID] = i
		for k, n := range j.Needs {
			if _, ok := x.neededBy[n]; !ok {
				x.neededBy[n] = i
			}
			if k == 0 {
				x.firstOf[n] = append(x.firstOf[n], i)
			}
		}
	}
	return x
}

// Of is the graph id is in (GraphOf).
func (x *Graphs) Of(id string) (Graph, error) {
	i, ok := x.byID[id]
	if !ok {
		return Graph{}, fmt.Errorf("job %q: %w", id, transfer.ErrUnknownJob)
	}
	top := x.jobs[i]
	// Climb to the job nothing needs: a share needs its upload, and the
	// message needs both.
	for seen := map[string]bool{}; !seen[top.ID]; {
		seen[top.ID] = true
		if k, ok := x.neededBy[top.ID]; ok {
			top = x.jobs[k]
		}
	}
	g := Graph{Msg: top}
	// Every job the top one needs, and what those need in turn (a Photos
	// batch's later call needs the earlier one, which needs its uploads);
	// for a message with links the same set as its own needs.
	var parts []transfer.Snapshot
	inGraph := map[string]bool{top.ID: true}
	for queue := slices.Clone(top.Needs); len(queue) > 0; queue = queue[1:] {
		n := queue[0]
		if inGraph[n] {
			continue
		}
		inGraph[n] = true
		if k, ok := x.byID[n]; ok {
			p := x.jobs[k]
			parts = append(parts, p)
			queue = append(queue, p.Needs...)
		} else {
			parts = append(parts, transfer.Snapshot{ID: n, State: transfer.StateCancelled}) // forgotten: nothing left to stop
		}
	}
	// Each upload, then its shares (in the order the walk found them):
	// the order a person reads them in.
	at := make(map[string]int, len(parts))
	for k, p := range parts {
		at[p.ID] = k
	}
	placed := map[string]bool{}
	for _, u := range parts {
		if len(u.Needs) > 0 && inGraph[u.Needs[0]] {
			continue
		}
		g.Parts, placed[u.ID] = append(g.Parts, u), true
		var shares []int
		for _, k := range x.firstOf[u.ID] {
			if k, ok := at[x.jobs[k].ID]; ok {
				shares = append(shares, k)
			}
		}
		slices.Sort(shares)
		for _, k := range shares {
			if sh := parts[k]; !placed[sh.ID] {
				g.Parts, placed[sh.ID] = append(g.Parts, sh), true
			}
		}
	}
	for _, p := range parts {
		if !placed[p.ID] {
			g.Parts = append(g.Parts, p)
		}
	}
	return g, nil
}

// DriveFile is a file one of a message's uploads put on Drive.
type DriveFile struct {
	Job  string // the upload's job
	Name string
	Root string // the API root it is under
	ID   string // its Drive id
}

// FilesOnDrive are the files the finished Drive uploads among parts made,
// by name.
func FilesOnDrive(jobs []transfer.Snapshot, parts []string) []DriveFile {
	var out []DriveFile
	for _, j := range jobs {
		if j.State != transfer.StateDone || !slices.Contains(parts, j.ID) {
			continue
		}
		r, root := delivery.RouteRoot(j.URL) // the API root before the route
		if r.Kind != delivery.KindDriveUpload {
			continue
		}
		var file struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		if j.Response != nil {
			json.Unmarshal(j.Response.Body, &file)
		}
		if file.ID == "" || file.Name == "" {
			// The id was asked for before the upload and is in its metadata.
			var meta struct{ ID, Name string }
			json.Unmarshal(j.Metadata, &meta)
			file.ID, file.Name = max(file.ID, meta.ID), max(file.Name, meta.Name)
		}
		if file.ID != "" {
			out = append(out, DriveFile{Job: j.ID, Name: file.Name, Root: root, ID: file.ID})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Delete deletes Drive file id (files.delete). A file already gone is
// deleted enough.
func (d Drive) Delete(ctx context.Context, id string) error {
	err := d.do(ctx, http.MethodDelete, "/drive/v3/files/"+url.PathEscape(id), nil, nil)
	if gapi.StatusOf(err) == http.StatusNotFound {
		return nil
	}
	return err
}

// DeleteFiles deletes files from Drive, each through auth and client,
// and returns the ones gone and what stopped the others.
func DeleteFiles(ctx context.Context, auth transfer.Authorizer, client gapi.Doer, files []DriveFile) (gone []DriveFile, err error) {
	var errs []error
	for _, f := range files {
		if e := (Drive{Root: f.Root, Auth: auth, Client: client}).Delete(ctx, f.ID); e != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.Name, e))
			continue
		}
		gone = append(gone, f)
	}
	return gone, errors.Join(errs...)
}
