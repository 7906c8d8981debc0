package sandbox

// The media limits of PROTOCOL.md section 1. Google's pages write "35MB"
// and mean MiB (36,700,160 bytes); Mirror's "10 MB" is read the same way.
const (
	limitSend   = 35 << 20
	limitInsert = 150 << 20
	limitMirror = 10 << 20
)

var (
	acceptMail  = []string{"message/*"}
	acceptMedia = []string{"image/*", "audio/*", "video/*"}
)

var uploadMethods = []*uploadMethod{
	{Name: "gmail.users.messages.send", HTTPMethod: "POST", Pattern: "/upload/gmail/v1/users/{userId}/messages/send",
		Limit: limitSend, Accept: acceptMail, Prepare: gmailPrepare, Finish: gmailFinish},
	{Name: "gmail.users.messages.insert", HTTPMethod: "POST", Pattern: "/upload/gmail/v1/users/{userId}/messages",
		Limit: limitInsert, Accept: acceptMail, Prepare: gmailPrepare, Finish: gmailFinish},
	{Name: "gmail.users.messages.import", HTTPMethod: "POST", Pattern: "/upload/gmail/v1/users/{userId}/messages/import",
		Limit: limitInsert, Accept: acceptMail, Prepare: gmailPrepare, Finish: gmailFinish},
	{Name: "gmail.users.drafts.create", HTTPMethod: "POST", Pattern: "/upload/gmail/v1/users/{userId}/drafts",
		Limit: limitSend, Accept: acceptMail, Prepare: gmailPrepare, Finish: gmailFinish},
	{Name: "gmail.users.drafts.update", HTTPMethod: "PUT", Pattern: "/upload/gmail/v1/users/{userId}/drafts/{id}",
		Limit: limitSend, Accept: acceptMail, Prepare: gmailPrepare, Finish: gmailFinish},
	{Name: "gmail.users.drafts.send", HTTPMethod: "POST", Pattern: "/upload/gmail/v1/users/{userId}/drafts/send",
		Limit: limitSend, Accept: acceptMail, Prepare: gmailPrepare, Finish: gmailFinish},
	{Name: "mirror.timeline.insert", HTTPMethod: "POST", Pattern: "/upload/mirror/v1/timeline",
		Limit: limitMirror, Accept: acceptMedia, Prepare: mirrorPrepare, Finish: mirrorFinish},
	{Name: "mirror.timeline.update", HTTPMethod: "PUT", Pattern: "/upload/mirror/v1/timeline/{id}",
		Limit: limitMirror, Accept: acceptMedia, Prepare: mirrorPrepare, Finish: mirrorFinish},
	{Name: "mirror.timeline.attachments.insert", HTTPMethod: "POST", Pattern: "/upload/mirror/v1/timeline/{itemId}/attachments",
		Limit: limitMirror, Accept: acceptMedia, Prepare: mirrorPrepare, Finish: mirrorFinish},
	{Name: "storage.objects.insert", HTTPMethod: "POST", Pattern: "/upload/storage/v1/b/{bucket}/o",
		Prepare: storagePrepare, Finish: storageFinish, GCS: true},
	{Name: "drive.files.create", HTTPMethod: "POST", Pattern: "/upload/drive/v3/files",
		Limit: limitDrive, SHA256: true, Room: driveRoom, Drain: true, Prepare: drivePrepare, Finish: driveFinish},
}
