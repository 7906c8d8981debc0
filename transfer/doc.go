// Package transfer is Carrier's upload engine: it sends a file to a
// Google-style upload URI with one of the three upload types (media,
// multipart, resumable), and for resumable uploads it finishes the job
// through dropped connections, 5xx storms, stalled sockets, a machine that
// slept, a crash and a restart, without sending different bytes, sending
// twice, or holding the file in memory.
//
// The rules it follows are those of docs/PROTOCOL.md sections 4 and 5, and for
// Google's second resumable dialect (Spec.Protocol ProtocolGoogUpload, the
// Photos Library API's) section 8, in the same session loop. It knows
// nothing of Fyne, Gmail or MIME: a job is a file, a target URI, a media type
// and optional metadata JSON.
//
// The pieces (docs/ARCHITECTURE.md has the whole picture):
//   - Uploader (uploader.go, resumable.go, googupload.go, oneshot.go,
//     source.go, decide.go):
//     one upload to its end, standing alone; it reports to a Sink.
//   - Journal: one fsync'd JSON record per job, so a job survives a crash;
//     a per-job lock so several processes can share one journal.
//   - Queue: workers, the person's commands, jobs that wait for jobs, and
//     Events carrying each job's Snapshot. Every state change goes through
//     Queue.transition along the table in lifecycle.go.
//
// Session URIs are credentials: they never appear in errors, events,
// snapshots or logs (see errors.go), and journal files are private (0600 in
// a 0700 folder).
package transfer
