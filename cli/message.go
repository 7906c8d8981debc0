package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"carrier/compose"
)

// stringList is a flag that may be given many times.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// messageFlags are the flags that describe a message, shared by compose and send.
type messageFlags struct {
	to, cc, bcc, replyTo, attach, references stringList
	from, subject, body, bodyFile, htmlFile  string
	inReplyTo, as                            string
}

func (f *messageFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.to, "to", "recipient (repeatable; also comma-separated)")
	fs.Var(&f.cc, "cc", "copy recipient (repeatable)")
	fs.Var(&f.bcc, "bcc", "blind copy recipient (repeatable; Gmail removes it on delivery)")
	fs.Var(&f.replyTo, "reply-to", "Reply-To address (repeatable)")
	fs.StringVar(&f.from, "from", "", "the account to send as, one signed in with carrier login (default: the one used last; carrier accounts lists them); also the message's From")
	fs.StringVar(&f.subject, "subject", "", "subject")
	fs.StringVar(&f.body, "body", "", "plain text body")
	fs.StringVar(&f.bodyFile, "body-file", "", "read the plain text body from this file (- for stdin)")
	fs.StringVar(&f.htmlFile, "html-file", "", "an HTML version of the body, from this file")
	fs.Var(&f.attach, "attach", "file to attach (repeatable)")
	fs.StringVar(&f.inReplyTo, "in-reply-to", "", "Message-ID of the message this replies to")
	fs.Var(&f.references, "references", "Message-ID of the thread (repeatable)")
	fs.StringVar(&f.as, "as", "send", "what the message is for: send, draft, insert or import (decides the size limit)")
}

// message turns the flags into a compose.Message and its method.
func (f *messageFlags) message(env *Env) (*compose.Message, compose.Method, error) {
	method, err := compose.ParseMethod(f.as)
	if err != nil {
		return nil, "", usagef("--as: %v", err)
	}
	if f.body != "" && f.bodyFile != "" {
		return nil, "", usagef("give --body or --body-file, not both")
	}
	text := f.body
	if f.bodyFile != "" {
		b, err := readInput(env, f.bodyFile)
		if err != nil {
			return nil, "", fmt.Errorf("--body-file: %w", err)
		}
		text = string(b)
	}
	var html string
	if f.htmlFile != "" {
		b, err := readInput(env, f.htmlFile)
		if err != nil {
			return nil, "", fmt.Errorf("--html-file: %w", err)
		}
		html = string(b)
	}
	return &compose.Message{
		From: f.from, To: f.to, Cc: f.cc, Bcc: f.bcc, ReplyTo: f.replyTo,
		Subject: f.subject, Text: text, HTML: html, Attachments: f.attach,
		InReplyTo: f.inReplyTo, References: f.references,
	}, method, nil
}

// readInput reads a file, or stdin for "-", refusing anything huge: a body
// is text a person wrote, not an attachment.
func readInput(env *Env, path string) ([]byte, error) {
	const max = 32 << 20
	if path == "-" {
		b := make([]byte, 0, 4096)
		buf := make([]byte, 32<<10)
		for {
			n, err := env.Stdin.Read(buf)
			b = append(b, buf[:n]...)
			if len(b) > max {
				return nil, fmt.Errorf("standard input is over %d MiB; attach it instead", max>>20)
			}
			if err != nil {
				return b, nil
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %s; a body this large should be an attachment", path, compose.HumanSize(fi.Size()))
	}
	return os.ReadFile(path)
}
