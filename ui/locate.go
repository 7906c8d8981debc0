package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/storage"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Ghosts: an upload whose file is no longer where it was (moved, renamed)
// waits (transfer.StateMissing); its row says where the file was and offers
// Locate…, a file dialog whose choice goes to the queue's Locate. The
// engine takes only the same file (its size, the bytes already sent) and
// goes on where the server stands; another is refused, said here in words.

// Locator is the queue's Locate (internal/app's Queue has it).
type Locator interface {
	Locate(ctx context.Context, id, path string) error
}

// locator is the queue's Locate, nil when the queue has none.
func (s *transfersScreen) locator() Locator {
	l, _ := s.u.deps.Uploads.(Locator)
	return l
}

// missingWords say where a ghost's file was, and what to do.
func missingWords(snap transfer.Snapshot) string {
	return lang.X("state.missing", "The file is no longer at {{.Path}}. If you moved it, press Locate… and choose it where it is now.",
		w{"Path": app.Printable(snap.Path)})
}

// locate asks where the file of row id's ghost is now (UI thread).
func (s *transfersScreen) locate(id string) {
	rd := s.data(s.deliveryOf(id))
	if rd != nil && rd.st.Can(delivery.VerbUseFile) && s.fileUser() != nil {
		// A file that changed: the file as it was, kept elsewhere, is
		// taken as a ghost's is (usefile.go).
		snap := rd.view(rd.st.Member.Job).snap
		pick := s.pickLocated
		if pick == nil {
			pick = s.pickFile
		}
		pick(snap.Path, func(path string) { s.useFileAt(snap.ID, path) })
		return
	}
	if rd == nil || rd.st.Phase != delivery.PhaseMissing || rd.st.Member == nil || s.locator() == nil {
		return
	}
	job, was := rd.st.Member.Job, rd.st.Path
	// The delivery's other ghosts that were in the same folder: a folder
	// of pictures moved whole is located by one of them.
	var others []ghost
	for _, m := range rd.d.Members {
		snap := rd.view(m.Job).snap
		if m.Job != job && snap.State == transfer.StateMissing && filepath.Dir(snap.Path) == filepath.Dir(was) {
			others = append(others, ghost{m.Job, filepath.Base(snap.Path)})
		}
	}
	pick := s.pickLocated
	if pick == nil {
		pick = s.pickFile
	}
	pick(was, func(path string) { s.locateAt(job, path, others) })
}

// ghost is a job whose file is missing, with the file's name.
type ghost struct{ job, name string }

// pickFile is Locate…'s file dialog, opened in the folder the file was in
// when that folder is still there (a file renamed in place).
func (s *transfersScreen) pickFile(was string, chosen func(path string)) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		chosen(localPath(r.URI()))
	}, s.u.win)
	if dir := filepath.Dir(was); was != "" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			if l, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
				d.SetLocation(l)
			}
		}
	}
	s.u.showFileDialog(d)
}

// locateAt gives the queue path as job's file; a refusal is said in words
// (the row redraws from the queue's events otherwise). Once it is taken,
// the others are looked for under their names in path's folder: the queue
// takes each only if it is the same file, and leaves the rest ghosts.
func (s *transfersScreen) locateAt(job, path string, others []ghost) {
	loc := s.locator()
	if loc == nil {
		return
	}
	s.u.goBackground(func(ctx context.Context) {
		err := loc.Locate(ctx, job, path)
		if err == nil {
			for _, o := range others {
				loc.Locate(ctx, o.job, filepath.Join(filepath.Dir(path), o.name))
			}
			return
		}
		title, text := locateRefusal(path, err)
		s.u.do(func() { s.u.showError(title, text) })
	})
}

// locateRefusal words why Locate did not take a file: the person's
// language first, the engine's own account under it.
func locateRefusal(path string, err error) (title, text string) {
	name := app.Printable(path)
	switch {
	case errors.Is(err, transfer.ErrNotSameFile):
		return lang.X("locate.different.title", "Not the same file"),
			lang.X("locate.different", "{{.Path}} is not the file this upload was sending: its size, or the bytes already sent, differ. The upload keeps waiting for its file.", w{"Path": name}) +
				"\n\n" + err.Error()
	case errors.Is(err, transfer.ErrNotMissing):
		return lang.X("locate.failed.title", "Could not use that file"),
			lang.X("locate.notmissing", "This upload is no longer waiting for its file.")
	}
	return lang.X("locate.failed.title", "Could not use that file"),
		lang.X("locate.failed", "Could not use {{.Path}}. The upload keeps waiting for its file.", w{"Path": name}) + "\n\n" + err.Error()
}
