// Package transfer is Carrier's upload engine: it sends a file to a
// Google-style upload URI with one of the three upload types (media,
// multipart, resumable), and for resumable uploads it finishes the job
// through dropped connections, 5xx storms, stalled sockets, a machine that
// slept, a crash and a restart, without sending different bytes, sending
// twice, or holding the file in memory.
//
// The rules it follows are those of PROTOCOL.md sections 4 and 5. It knows
// nothing of Fyne, Gmail or MIME: a job is a file, a target URI, a media type
// and optional metadata JSON.
//
// The pieces:
//   - Journal: one fsync'd JSON record per job, so a job survives a crash;
//     a per-job lock so several processes can share one journal.
//   - Queue: a few workers, pause/resume/cancel/retry, and Events.
//   - the engine (engine.go): one job's run, with its retry rules.
//
// Session URIs are credentials: they never appear in errors, events or logs
// (see redact.go), and journal files are private (0600 in a 0700 folder).
package transfer
