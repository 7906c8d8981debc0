package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// pageBounds reads pageSize and pageToken (an offset, opaque to clients).
func pageBounds(q url.Values, n, def, most int) (int, int, string, *apiError) {
	size := def
	if v := q.Get("pageSize"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 1 || m > most {
			return 0, 0, "", errorf(400, "invalid", "Invalid value for pageSize: %q; it must be between 1 and %d.", v, most)
		}
		size = m
	}
	start := 0
	if v := q.Get("pageToken"); v != "" {
		st, err := strconv.Atoi(strings.TrimPrefix(v, "p"))
		if err != nil || st < 0 || !strings.HasPrefix(v, "p") {
			return 0, 0, "", errorf(400, "invalid", "Invalid pageToken %q: use the nextPageToken of the previous page.", v)
		}
		start = min(st, n)
	}
	end := min(start+size, n)
	next := ""
	if end < n {
		next = "p" + strconv.Itoa(end)
	}
	return start, end, next, nil
}

func (s *Sandbox) serveListFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel, e := selection(q.Get("fields"), driveFileListSchema, defaultFileListFields)
	if e != nil {
		writeError(w, e)
		return
	}
	match, e := parseDriveQuery(q.Get("q"), s.resolveID)
	if e != nil {
		writeError(w, e)
		return
	}
	less, e := driveOrder(q.Get("orderBy"))
	if e != nil {
		writeError(w, e)
		return
	}
	if c := q.Get("corpora"); c != "" && c != "user" {
		writeError(w, errorf(400, "invalid", "Invalid value for corpora: %q; the sandbox has only the user's own files.", c))
		return
	}
	var out map[string]any
	root := s.driveRoot()
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		var all []*driveFileRec
		err := forEach(tx, bDriveFiles, func(_ string, f *driveFileRec) error {
			if f.ID != root && match(f) {
				all = append(all, f)
			}
			return nil
		})
		if err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		sort.SliceStable(all, func(i, j int) bool { return less(all[i], all[j]) })
		start, end, next, e := pageBounds(q, len(all), 100, 1000)
		if e != nil {
			return e
		}
		files := []map[string]any{}
		for _, f := range all[start:end] {
			files = append(files, s.fileResource(tx, f, baseURL(r)))
		}
		out = map[string]any{"kind": "drive#fileList", "incompleteSearch": false, "files": files}
		if next != "" {
			out["nextPageToken"] = next
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(out))
}

// driveOrder reads orderBy: createdTime, modifiedTime, name, folder, each
// optionally with desc. The default is newest first.
func driveOrder(orderBy string) (func(a, b *driveFileRec) bool, *apiError) {
	type key struct {
		cmp  func(a, b *driveFileRec) int
		desc bool
	}
	byName := map[string]func(a, b *driveFileRec) int{
		"createdTime":  func(a, b *driveFileRec) int { return cmpInt(a.Seq, b.Seq) },
		"modifiedTime": func(a, b *driveFileRec) int { return cmpInt(a.Seq, b.Seq) },
		"name":         func(a, b *driveFileRec) int { return strings.Compare(a.Name, b.Name) },
		"folder": func(a, b *driveFileRec) int {
			return -cmpInt(boolInt(a.folder()), boolInt(b.folder())) // folders first
		},
	}
	keys := []key{{byName["createdTime"], true}}
	if strings.TrimSpace(orderBy) != "" {
		keys = nil
		for _, part := range strings.Split(orderBy, ",") {
			f := strings.Fields(part)
			if len(f) == 0 || len(f) > 2 || len(f) == 2 && f[1] != "desc" || byName[f[0]] == nil {
				return nil, errorf(400, "invalid", "Invalid orderBy %q: the sandbox sorts by createdTime, modifiedTime, name and folder, each optionally followed by desc.", orderBy)
			}
			keys = append(keys, key{byName[f[0]], len(f) == 2})
		}
	}
	return func(a, b *driveFileRec) bool {
		for _, k := range keys {
			c := k.cmp(a, b)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return a.ID < b.ID
	}, nil
}

func cmpInt[T int | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parseDriveQuery reads the subset of Drive's search language the sandbox
// serves (see the top of this file).
func parseDriveQuery(q string, resolve func(string) string) (func(*driveFileRec) bool, *apiError) {
	refuse := func(why string) (func(*driveFileRec) bool, *apiError) {
		return nil, errorf(400, "invalid", "Invalid Value for q (%s): the sandbox's files.list understands terms joined by 'and': "+
			"name = '...', name contains '...', mimeType = '...', mimeType != '...', trashed = true|false, '...' in parents.", why)
	}
	toks, err := queryTokens(q)
	if err != nil {
		return refuse(err.Error())
	}
	var terms []func(*driveFileRec) bool
	for len(toks) > 0 {
		var t []qtok
		i := slices.IndexFunc(toks, func(x qtok) bool { return !x.str && strings.EqualFold(x.s, "and") })
		if i < 0 {
			t, toks = toks, nil
		} else {
			t, toks = toks[:i], toks[i+1:]
			if len(toks) == 0 {
				return refuse("nothing after and")
			}
		}
		if len(t) != 3 {
			return refuse(fmt.Sprintf("%q is not a term it knows", joinToks(t)))
		}
		a, op, b := t[0], t[1], t[2]
		switch {
		case !a.str && a.s == "name" && op.s == "=" && b.str:
			terms = append(terms, func(f *driveFileRec) bool { return f.Name == b.s })
		case !a.str && a.s == "name" && op.s == "contains" && b.str:
			terms = append(terms, func(f *driveFileRec) bool { return strings.Contains(strings.ToLower(f.Name), strings.ToLower(b.s)) })
		case !a.str && a.s == "mimeType" && (op.s == "=" || op.s == "!=") && b.str:
			eq := op.s == "="
			terms = append(terms, func(f *driveFileRec) bool { return (f.MimeType == b.s) == eq })
		case !a.str && a.s == "trashed" && (op.s == "=" || op.s == "!=") && !b.str && (b.s == "true" || b.s == "false"):
			want := (b.s == "true") == (op.s == "=")
			terms = append(terms, func(*driveFileRec) bool { return !want })
		case a.str && op.s == "in" && !b.str && b.s == "parents":
			parent := resolve(a.s)
			terms = append(terms, func(f *driveFileRec) bool { return f.Parent == parent })
		default:
			return refuse(fmt.Sprintf("%q is not a term it knows", joinToks(t)))
		}
	}
	return func(f *driveFileRec) bool {
		for _, t := range terms {
			if !t(f) {
				return false
			}
		}
		return true
	}, nil
}

type qtok struct {
	s   string
	str bool // a quoted string
}

func joinToks(t []qtok) string {
	var parts []string
	for _, x := range t {
		if x.str {
			parts = append(parts, "'"+x.s+"'")
		} else {
			parts = append(parts, x.s)
		}
	}
	return strings.Join(parts, " ")
}

func queryTokens(q string) ([]qtok, error) {
	var out []qtok
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(q) {
					return nil, errors.New("a quoted string is not closed")
				}
				if q[i] == '\\' && i+1 < len(q) {
					b.WriteByte(q[i+1])
					i += 2
					continue
				}
				if q[i] == '\'' {
					i++
					break
				}
				b.WriteByte(q[i])
				i++
			}
			out = append(out, qtok{s: b.String(), str: true})
		case c == '=':
			out = append(out, qtok{s: "="})
			i++
		case c == '!' && i+1 < len(q) && q[i+1] == '=':
			out = append(out, qtok{s: "!="})
			i += 2
		default:
			j := i
			for j < len(q) && !strings.ContainsRune(" \t\r\n='!", rune(q[j])) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q", q[i])
			}
			out = append(out, qtok{s: q[i:j]})
			i = j
		}
	}
	return out, nil
}
