package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2/lang"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A file that changed after its upload began stops its upload for good
// (transfer's FailSourceChanged): Retry would stop the same way, since the
// times the engine compares are the queued ones. Often the bytes are the
// same (saved again unchanged, touched by a sync tool, put back): the row
// looks at the file in the background (the queue's CheckFile: its size,
// and the hash of the part the server holds) and then either offers Use
// this file, which sends it on from where the server stands, or says how
// it changed (its size now, when it was saved) and offers what can work:
// Locate… for the file as it was if the person kept it elsewhere, and for
// a message Reopen in Compose. Never a Retry that cannot succeed.

// FileUser is the queue's CheckFile and UseFile (internal/app's Queue has
// them, from transfer's).
type FileUser interface {
	CheckFile(ctx context.Context, id, path string) error
	UseFile(ctx context.Context, id, path string) error
}

// fileUser is the queue's CheckFile and UseFile, nil when it has none.
func (s *transfersScreen) fileUser() FileUser {
	f, _ := s.u.deps.Uploads.(FileUser)
	return f
}

// changedCheck is what a look at a changed file found.
type changedCheck struct {
	seq     uint64 // the snapshot of the failure it was made for
	pending bool   // the look is under way
	same    bool   // the queue would take it: Use this file
	gone    bool   // no file at its path
	size    int64  // the file's size now
	mod     time.Time
}

// changedLook is the look at the file of the failed member of rd, when
// the delivery stopped because it changed and the queue can take it
// again: started in the background the first time the row is drawn for
// that failure, nil until it ends (UI thread).
func (s *transfersScreen) changedLook(rd *rowData) *changedCheck {
	fu := s.fileUser()
	if fu == nil || !rd.st.Can(delivery.VerbUseFile) {
		return nil
	}
	snap := rd.view(rd.st.Member.Job).snap
	s.mu.Lock()
	if s.checks == nil {
		s.checks = map[string]*changedCheck{}
	}
	c := s.checks[snap.ID]
	if c != nil && c.seq == snap.Seq {
		s.mu.Unlock()
		if c.pending {
			return nil
		}
		return c
	}
	s.checks[snap.ID] = &changedCheck{seq: snap.Seq, pending: true}
	s.mu.Unlock()
	s.u.goBackground(func(ctx context.Context) {
		c := examine(ctx, fu, snap)
		s.mu.Lock()
		if old := s.checks[snap.ID]; old != nil && old.seq == snap.Seq {
			s.checks[snap.ID] = &c
		}
		s.mu.Unlock()
		s.u.do(func() { s.draw(snap.ID) })
	})
	return nil
}

// examine looks at a changed job's file: whether it is there, its size and
// time now, and whether the queue would take it (CheckFile reads the part
// the server holds, so not on the UI thread).
func examine(ctx context.Context, fu FileUser, snap transfer.Snapshot) changedCheck {
	c := changedCheck{seq: snap.Seq}
	fi, err := os.Stat(snap.Path)
	if err != nil || !fi.Mode().IsRegular() {
		c.gone = true
		return c
	}
	c.size, c.mod = fi.Size(), fi.ModTime()
	c.same = fu.CheckFile(ctx, snap.ID, snap.Path) == nil
	return c
}

// forgetLook drops what the row knew of job's file, so that the next
// drawing looks at it again.
func (s *transfersScreen) forgetLook(job string) {
	s.mu.Lock()
	delete(s.checks, job)
	s.mu.Unlock()
}

// changedLookWords say which file changed and how, from the look at it,
// and what can work: Use this file when the queue would take it; else
// Locate… for the file as it was, and the way to send it as it is now.
func changedLookWords(snap transfer.Snapshot, c *changedCheck, kind delivery.Kind) string {
	name := app.Printable(filepath.Base(snap.Path))
	if c.same && snap.Confirmed == 0 {
		return lang.X("fail.changed.same.unsent", "{{.Name}} was saved again after its upload began ({{.Time}}), with the same size, before any of it went. Use this file sends it as it is now.",
			w{"Name": name, "Time": shortDate(c.mod.Local())})
	}
	if c.same {
		return lang.X("fail.changed.same", "{{.Name}} was saved again after its upload began ({{.Time}}), but the part already sent is unchanged. Use this file sends the rest of it as it is now, from where it stopped.",
			w{"Name": name, "Time": shortDate(c.mod.Local())})
	}
	var how string
	switch {
	case c.gone:
		how = lang.X("fail.changed.gone", "it is no longer at {{.Path}}", w{"Path": app.Printable(snap.Path)})
	case c.size != snap.Size:
		now, was := humanSize(c.size), humanSize(snap.Size)
		if now == was {
			now, was = bytesWords(c.size), bytesWords(snap.Size)
		}
		how = lang.X("fail.changed.sizenow", "its size is now {{.Now}}, not {{.Was}} (saved {{.Time}})", w{"Now": now, "Was": was, "Time": shortDate(c.mod.Local())})
	default:
		how = lang.X("fail.changed.bytesnow", "its first {{.Sent}}, already sent, are not the same any more (saved {{.Time}})", w{"Sent": humanSize(snap.Confirmed), "Time": shortDate(c.mod.Local())})
	}
	way := lang.X("fail.changed.way.upload", "if its new content is what you want, send it again as a new upload")
	switch kind {
	case delivery.KindMessage, delivery.KindDraft:
		way = lang.X("fail.changed.way.message", "if its new content is what you want, press Reopen in Compose and send the message again")
	case delivery.KindPhotos:
		way = lang.X("fail.changed.way.photos", "if its new content is what you want, add it again on the Media screen")
	}
	return lang.X("fail.changed.look", "{{.Name}} changed after its upload began: {{.How}}. Carrier stopped rather than send a mix of old and new, and Retry would stop the same way. If you still have the file as it was, press Locate… and choose it; {{.Way}}.",
		w{"Name": name, "How": how, "Way": way})
}

// bytesWords is an exact size, for two sizes that round the same.
func bytesWords(n int64) string {
	return lang.XN("size.bytes", "{{.N}} bytes", int(n), w{"N": n})
}

// changedFailureWords is a failed delivery's words for the file of member
// snap that changed, when the row looked at it; "" when it did not.
// The engine's detail line is left out.
func (s *transfersScreen) changedFailureWords(rd *rowData, snap transfer.Snapshot) string {
	c := rd.look // the drawing's look, which its buttons show too
	if !rd.looked {
		s.mu.Lock()
		c = s.checks[snap.ID]
		s.mu.Unlock()
	}
	if c == nil || c.pending || c.seq != snap.Seq || !rd.st.Can(delivery.VerbUseFile) {
		return ""
	}
	// The engine's own line would say again, in English, what these
	// words say more closely (which file, how, when): the row is kept
	// short, so that the list's page holds more than one such row.
	return changedLookWords(snap, c, rd.d.Kind)
}

// useFile takes the changed file of row id's delivery as it is now.
func (s *transfersScreen) useFile(id string) {
	rd := s.data(s.deliveryOf(id))
	if rd == nil || !rd.st.Can(delivery.VerbUseFile) {
		return
	}
	snap := rd.view(rd.st.Member.Job).snap
	s.useFileAt(snap.ID, snap.Path)
}

// useFileAt gives the queue path as changed job's file; a refusal is said
// in words, and the file looked at again.
func (s *transfersScreen) useFileAt(job, path string) {
	fu := s.fileUser()
	if fu == nil {
		return
	}
	s.u.goBackground(func(ctx context.Context) {
		err := fu.UseFile(ctx, job, path)
		if err == nil {
			return
		}
		s.forgetLook(job)
		title, text := useFileRefusal(path, err)
		s.u.do(func() {
			s.u.showError(title, text)
			s.draw(job)
		})
	})
}

// useFileRefusal words why the queue did not take a changed file: the
// person's language first, the engine's own account under it.
func useFileRefusal(path string, err error) (title, text string) {
	name := app.Printable(path)
	switch {
	case errors.Is(err, transfer.ErrNotSameFile):
		return lang.X("locate.different.title", "Not the same file"),
			lang.X("usefile.different", "{{.Path}} is not the file this upload was sending: its size, or the bytes already sent, differ. The upload stays stopped.", w{"Path": name}) +
				"\n\n" + err.Error()
	case errors.Is(err, transfer.ErrNotChanged):
		return lang.X("locate.failed.title", "Could not use that file"),
			lang.X("usefile.notchanged", "This upload is no longer stopped for a changed file.")
	}
	return lang.X("locate.failed.title", "Could not use that file"),
		lang.X("usefile.failed", "Could not use {{.Path}}. The upload stays stopped.", w{"Path": name}) + "\n\n" + err.Error()
}
