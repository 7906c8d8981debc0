package message

import (
	"encoding/base64"
	"strings"
	"testing"
)

// The links of a draft are found however its text is encoded: a
// quoted-printable line broken inside the link, a base64 HTML part; a
// link inside an attached file is not the message's.
func TestLinkedFilesReadsEncodedParts(t *testing.T) {
	html := base64.StdEncoding.EncodeToString([]byte(`<a href="https://drive.google.com/file/d/idInHTML_2/view?usp=drivesdk">b</a>`))
	raw := "From: a@example.com\r\n" +
		"To: Zoe <zoe@example.com>, max@example.com\r\n" +
		"Cc: =?UTF-8?B?0JzQsNC60YE=?= <max@example.com>\r\n" +
		"Bcc: bob@example.com\r\n" +
		"Content-Type: multipart/mixed; boundary=\"out\"\r\n\r\n" +
		"--out\r\nContent-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n" +
		"--alt\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"1 file is shared with you on Google Drive:\r\nhttps://drive.google.com/file/d/idInTe=\r\nxt-1/view?usp=3Ddrivesdk\r\n" +
		"--alt\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		html[:20] + "\r\n" + html[20:] + "\r\n" +
		"--alt--\r\n" +
		"--out\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"notes.txt\"\r\n\r\n" +
		"https://drive.google.com/file/d/idInAttachment/view\r\n" +
		"--out--\r\n"
	ids, err := LinkedFiles([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != "idInText-1 idInHTML_2" {
		t.Fatalf("ids %q", ids)
	}
	who, err := Recipients([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(who, " ") != "zoe@example.com max@example.com bob@example.com" {
		t.Fatalf("recipients %q", who)
	}
}
