package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2/lang"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A job's name and where it goes are said in the window's language when
// its row is drawn, not as they are stored. The journal keeps a label
// for people in English (transfer.Spec.Label: the CLI prints it, and a
// job read back after a restart has nothing else), made by the app's
// recipes from a few parts: a message's subject and recipients, a file's
// name, with whom a share is made, which Photos items a call makes. The
// kind of job comes from its role in its delivery, the parts from the label as
// the recipe wrote them, and the words around them from the catalogues;
// a label of another shape is shown as it is.

// The English the recipes put around a label's parts (compose.Message.Label,
// app's Drive, Photos and timeline recipes).
const (
	labelTo         = " · to "
	labelNoSubject  = "(no subject)"
	labelToDrive    = " · to Google Drive"
	labelSharedWith = " · shared with "
	labelAnyone     = "anyone with the link"
	labelToPhotos   = " · to Google Photos"
	labelToTimeline = " · to the timeline"
	labelItems      = "Google Photos · items %d–%d of %d"
	labelInto       = " into " // the album's name follows
	labelBatch      = " to Google Photos into "
)

// batchAlbum is the album a Photos batch's label names ("3 files to
// Google Photos into Summer"), "" for none.
func batchAlbum(label string) string {
	_, album, _ := strings.Cut(label, labelBatch)
	return album
}

// jobTitle is the name a job shows, in the window's language, safe to
// show (app.Printable: a subject or a file name is anyone's text); role
// is its part in its delivery.
func jobTitle(s transfer.Snapshot, role delivery.Role) string {
	label := app.Printable(s.Label)
	if label == "" {
		return app.Printable(jobName(s))
	}
	switch role {
	case delivery.RoleMessage:
		if subject, to, ok := cutLast(label, labelTo); ok {
			if subject == labelNoSubject {
				subject = lang.X("job.nosubject", "(no subject)")
			}
			return lang.X("job.message", "{{.Subject}} · to {{.To}}", w{"Subject": subject, "To": to})
		}
	case delivery.RoleDriveFile:
		if name, ok := strings.CutSuffix(label, labelToDrive); ok {
			return lang.X("job.drive", "{{.Name}} · to Google Drive", w{"Name": name})
		}
	case delivery.RoleDriveShare:
		if name, who, ok := cutLast(label, labelSharedWith); ok {
			if who == labelAnyone {
				return lang.X("job.share.anyone", "{{.Name}} · shared with anyone with the link", w{"Name": name})
			}
			return lang.X("job.share", "{{.Name}} · shared with {{.Who}}", w{"Name": name, "Who": who})
		}
	case delivery.RolePhoto:
		if name, ok := strings.CutSuffix(label, labelToPhotos); ok {
			return lang.X("job.photos", "{{.Name}} · to Google Photos", w{"Name": name})
		}
	case delivery.RoleItems:
		var first, last, total int
		if n, err := fmt.Sscanf(label, labelItems, &first, &last, &total); err == nil && n == 3 {
			f := w{"First": first, "Last": last, "Total": total}
			switch rest := strings.TrimPrefix(label, fmt.Sprintf(labelItems, first, last, total)); {
			case rest == "":
				return lang.XN("job.items", "Google Photos · items {{.First}}–{{.Last}} of {{.Total}}", total, f)
			case strings.HasPrefix(rest, labelInto):
				f["Album"] = strings.TrimPrefix(rest, labelInto)
				return lang.XN("job.items.album", "Google Photos · items {{.First}}–{{.Last}} of {{.Total}} into {{.Album}}", total, f)
			}
		}
	case delivery.RoleUpload:
		if name, ok := strings.CutSuffix(label, labelToTimeline); ok {
			return lang.X("job.timeline", "{{.Name}} · to the timeline", w{"Name": name})
		}
	}
	return label
}

// sharedWith is with whom a done share was made, as its row says it.
func sharedWith(s transfer.Snapshot) string {
	_, who, _ := cutLast(app.Printable(s.Label), labelSharedWith)
	if who == labelAnyone {
		return lang.X("job.anyone", "anyone with the link")
	}
	return who
}

// cutLast cuts s around the last sep: a subject may hold " · to ", the
// recipients, made of addresses, do not.
func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// whereWords names where a job goes, in the window's language: "Gmail ·
// send (sandbox, on this computer)". sandbox is the embedded sandbox's
// API root.
func whereWords(uploadURL, sandbox string) string {
	p, ok := app.Where(uploadURL, sandbox)
	if !ok {
		return ""
	}
	what := kindWords(p)
	switch {
	case p.Local:
		return lang.X("where.local", "{{.What}} (sandbox, on this computer)", w{"What": what})
	case p.Host == "":
		return what
	}
	return lang.X("where.at", "{{.What}} at {{.Host}}", w{"What": what, "Host": app.Printable(p.Host)})
}

// kindWords says a kind of request as people do: "Gmail · send".
func kindWords(p app.Place) string {
	switch p.Kind {
	case "gmail.send":
		return lang.X("route.gmail.send", "Gmail · send")
	case "gmail.senddraft":
		return lang.X("route.gmail.senddraft", "Gmail · send draft")
	case "gmail.updatedraft":
		return lang.X("route.gmail.updatedraft", "Gmail · update draft")
	case "gmail.savedraft":
		return lang.X("route.gmail.savedraft", "Gmail · save draft")
	case "gmail.import":
		return lang.X("route.gmail.import", "Gmail · import")
	case "gmail.insert":
		return lang.X("route.gmail.insert", "Gmail · insert")
	case "timeline.attach":
		return lang.X("route.timeline.attach", "Timeline · add to item")
	case "timeline":
		return lang.X("route.timeline.post", "Timeline")
	case "storage":
		return lang.X("route.storage", "Storage")
	case "photos.upload":
		return lang.X("route.photos.upload", "Google Photos · upload")
	case "photos.items":
		return lang.X("route.photos.items", "Google Photos · media items made")
	case "photos.album":
		return lang.X("route.photos.album", "Google Photos · album")
	case "drive.upload":
		return lang.X("route.drive.upload", "Google Drive · upload")
	case "drive.share":
		return lang.X("route.drive.share", "Google Drive · share")
	}
	return app.Printable(p.What)
}
