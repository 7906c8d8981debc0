package sandbox

import (
	"fmt"
	"net/http"
	"strings"
)

// Drive's partial responses: fields=id,name,files(id,size),storageQuota/limit.
// A selection is parsed into a tree, checked against the resource's field
// names (an unknown one is refused, as Drive refuses it), and applied to
// the resource as rendered.

// fieldSel is a parsed selection; a nil value selects the whole field,
// and "*" every field at its level.
type fieldSel map[string]fieldSel

// fieldSchema names the fields a resource has; a nil value is a field
// whose inside is not checked (a string, or an object such as owners).
type fieldSchema map[string]fieldSchema

func leaves(names string) fieldSchema {
	s := fieldSchema{}
	for _, n := range strings.Fields(names) {
		s[n] = nil
	}
	return s
}

type fieldParser struct {
	s string
	i int
}

func parseFields(s string) (fieldSel, error) {
	p := &fieldParser{s: s}
	sel, err := p.list()
	if err != nil {
		return nil, err
	}
	if p.space(); p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q at position %d", p.s[p.i], p.i)
	}
	return sel, nil
}

func (p *fieldParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *fieldParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *fieldParser) list() (fieldSel, error) {
	sel := fieldSel{}
	for {
		p.space()
		name, sub, err := p.item()
		if err != nil {
			return nil, err
		}
		sel.add(name, sub)
		p.space()
		if p.peek() != ',' {
			return sel, nil
		}
		p.i++
	}
}

func (p *fieldParser) item() (string, fieldSel, error) {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",()/ \t", rune(p.s[p.i])) {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return "", nil, fmt.Errorf("a field name is missing at position %d", start)
	}
	p.space()
	switch p.peek() {
	case '/':
		p.i++
		p.space()
		n, sub, err := p.item()
		if err != nil {
			return "", nil, err
		}
		return name, fieldSel{n: sub}, nil
	case '(':
		p.i++
		sub, err := p.list()
		if err != nil {
			return "", nil, err
		}
		if p.space(); p.peek() != ')' {
			return "", nil, fmt.Errorf("an opening parenthesis after %s is not closed", name)
		}
		p.i++
		return name, sub, nil
	}
	return name, nil, nil
}

// add merges a field into the selection: the whole field wins over parts.
func (sel fieldSel) add(name string, sub fieldSel) {
	old, ok := sel[name]
	switch {
	case !ok:
		sel[name] = sub
	case old == nil || sub == nil:
		sel[name] = nil
	default:
		for k, v := range sub {
			old.add(k, v)
		}
	}
}

// check refuses a name the schema does not have.
func (sel fieldSel) check(schema fieldSchema, prefix string) error {
	for name, sub := range sel {
		if name == "*" {
			continue
		}
		inner, ok := schema[name]
		if !ok {
			return fmt.Errorf("Invalid field selection %s", prefix+name)
		}
		if sub != nil && inner != nil {
			if err := sub.check(inner, prefix+name+"/"); err != nil {
				return err
			}
		}
	}
	return nil
}

// apply keeps the selected fields of a rendered resource.
func (sel fieldSel) apply(v any) any {
	if sel == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if star, all := sel["*"]; all {
			for k, val := range x {
				out[k] = star.apply(val)
			}
		}
		for k, sub := range sel {
			if val, ok := x[k]; ok && k != "*" {
				out[k] = sub.apply(val)
			}
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i := range x {
			out[i] = sel.apply(x[i]).(map[string]any)
		}
		return out
	}
	return v
}

// selection reads the fields parameter against a schema, or the default
// Drive answers with when there is none.
func selection(fields string, schema fieldSchema, def string) (fieldSel, *apiError) {
	if strings.TrimSpace(fields) == "" {
		fields = def
	}
	sel, err := parseFields(fields)
	if err == nil {
		err = sel.check(schema, "")
	}
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "Invalid field selection") {
			msg = "Invalid field selection: " + msg
		}
		return nil, errorf(http.StatusBadRequest, "invalidParameter", "%s", msg)
	}
	return sel, nil
}

// The schemas of the resources the sandbox's Drive answers with, from the
// Drive v3 discovery document; fields it never fills are valid but absent.
var (
	driveFileSchema = leaves(`appProperties capabilities clientEncryptionDetails contentHints contentRestrictions
		copyRequiresWriterPermission createdTime description downloadRestrictions driveId explicitlyTrashed exportLinks
		fileExtension folderColorRgb fullFileExtension hasAugmentedPermissions hasThumbnail headRevisionId iconLink id
		imageMediaMetadata inheritedPermissionsDisabled isAppAuthorized kind labelInfo lastModifyingUser linkShareMetadata
		md5Checksum mimeType modifiedByMe modifiedByMeTime modifiedTime name originalFilename ownedByMe owners parents
		permissionIds permissions properties quotaBytesUsed resourceKey sha1Checksum sha256Checksum shared sharedWithMeTime
		sharingUser shortcutDetails size spaces starred teamDriveId thumbnailLink thumbnailVersion trashed trashedTime
		trashingUser version videoMediaMetadata viewedByMe viewedByMeTime viewersCanCopyContent webContentLink webViewLink
		writersCanShare`)
	drivePermissionSchema = leaves(`allowFileDiscovery deleted displayName domain emailAddress expirationTime id
		inheritedPermissionsDisabled kind pendingOwner permissionDetails photoLink role teamDrivePermissionDetails type view`)
	driveFileListSchema       = fieldSchema{"kind": nil, "nextPageToken": nil, "incompleteSearch": nil, "files": driveFileSchema}
	drivePermissionListSchema = fieldSchema{"kind": nil, "nextPageToken": nil, "permissions": drivePermissionSchema}
	driveGeneratedIDsSchema   = leaves("kind space ids")
	driveAboutSchema          = fieldSchema{
		"kind": nil, "appInstalled": nil, "canCreateDrives": nil, "canCreateTeamDrives": nil, "driveThemes": nil,
		"exportFormats": nil, "folderColorPalette": nil, "importFormats": nil, "maxImportSizes": nil, "maxUploadSize": nil,
		"teamDriveThemes": nil,
		"storageQuota":    leaves("limit usage usageInDrive usageInDriveTrash"),
		"user":            leaves("displayName emailAddress kind me permissionId photoLink"),
	}
)

// The answers Drive gives without fields=.
const (
	defaultFileFields       = "kind,id,name,mimeType"
	defaultFileListFields   = "kind,nextPageToken,incompleteSearch,files(kind,id,name,mimeType)"
	defaultPermissionFields = "kind,id,type,role"
	defaultPermListFields   = "kind,nextPageToken,permissions(kind,id,type,role)"
)
