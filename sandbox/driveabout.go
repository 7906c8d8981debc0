package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// DriveQuota is the storage the sandbox's Drive reports and enforces.
type DriveQuota struct {
	Limit      int64 // bytes; negative: no limit
	OtherUsage int64 // bytes used outside Drive and Photos (Gmail), counted against Limit
}

// SetDriveQuota changes the Drive quota at run time ("Drive is full" is a
// Limit at or below what is used). It lasts until the sandbox stops.
func (s *Sandbox) SetDriveQuota(q DriveQuota) {
	s.drive.mu.Lock()
	s.drive.quota = q
	s.drive.mu.Unlock()
}

// DriveQuota returns the Drive quota in force.
func (s *Sandbox) DriveQuota() DriveQuota {
	s.drive.mu.Lock()
	defer s.drive.mu.Unlock()
	return s.drive.quota
}

var errDriveQuota = errorf(http.StatusForbidden, "storageQuotaExceeded",
	"The user's Drive storage quota has been exceeded.")

func driveUsage(tx *bolt.Tx) int64 {
	if v := tx.Bucket(bMeta).Get(keyDriveUse); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func addDriveUsage(tx *bolt.Tx, delta int64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(max(driveUsage(tx)+delta, 0)))
	return tx.Bucket(bMeta).Put(keyDriveUse, buf[:])
}

// room is what the quota leaves for new bytes; negative: no limit.
func (s *Sandbox) driveFree(tx *bolt.Tx) int64 {
	q := s.DriveQuota()
	if q.Limit < 0 {
		return -1
	}
	return max(q.Limit-q.OtherUsage-driveUsage(tx)-photosUsage(tx), 0)
}

// driveRoom is drive.files.create's Room: uploads are bounded by the quota.
func driveRoom(s *Sandbox) (int64, *apiError) {
	free := int64(-1)
	s.db.View(func(tx *bolt.Tx) error { free = s.driveFree(tx); return nil })
	return free, errDriveQuota
}

func (s *Sandbox) serveAbout(w http.ResponseWriter, r *http.Request) {
	fields := r.URL.Query().Get("fields")
	if strings.TrimSpace(fields) == "" {
		writeError(w, errorf(400, "required", "The 'fields' parameter is required for this method."))
		return
	}
	sel, e := selection(fields, driveAboutSchema, "")
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(map[string]any{
		"kind": "drive#about", "user": s.driveUser(), "storageQuota": s.storageQuota(),
		"maxUploadSize": strconv.FormatInt(limitDrive, 10), "appInstalled": false,
		"canCreateDrives": false, "canCreateTeamDrives": false,
	}))
}

// storageQuota is about.get's storageQuota: int64 values as strings.
func (s *Sandbox) storageQuota() map[string]any {
	q := s.DriveQuota()
	var used, photos int64
	s.db.View(func(tx *bolt.Tx) error { used, photos = driveUsage(tx), photosUsage(tx); return nil })
	out := map[string]any{
		"usage":             strconv.FormatInt(used+photos+q.OtherUsage, 10),
		"usageInDrive":      strconv.FormatInt(used, 10),
		"usageInDriveTrash": "0",
	}
	if q.Limit >= 0 {
		out["limit"] = strconv.FormatInt(q.Limit, 10) // absent when unlimited, as Drive does
	}
	return out
}

// serveDriveControl reads and sets the quota: PUT /sandbox/v1/drive with
// {"limit": N, "otherUsage": N} (numbers or numeric strings; a negative
// limit is none; a field left out stays as it is).
func (s *Sandbox) serveDriveControl(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		in, ok := controlFields(w, r, `{"limit": 1000000, "otherUsage": 0}`)
		if !ok {
			return
		}
		q := s.DriveQuota()
		for k, v := range in {
			var n json.Number
			if err := json.Unmarshal(v, &n); err != nil {
				var str string
				if json.Unmarshal(v, &str) != nil {
					writeError(w, badRequest("%s must be a number of bytes.", k))
					return
				}
				n = json.Number(str)
			}
			x, err := n.Int64()
			if err != nil {
				writeError(w, badRequest("%s must be a whole number of bytes: %v", k, err))
				return
			}
			switch k {
			case "limit":
				q.Limit = x
			case "otherUsage":
				if x < 0 {
					writeError(w, badRequest("otherUsage cannot be negative."))
					return
				}
				q.OtherUsage = x
			default:
				writeError(w, badRequest("Unknown field %q: the Drive controls are limit and otherUsage.", k))
				return
			}
		}
		s.SetDriveQuota(q)
		s.log.Info("drive quota changed", "limit", q.Limit, "otherUsage", q.OtherUsage)
	}
	q := s.DriveQuota()
	out := s.storageQuota()
	out["otherUsage"] = strconv.FormatInt(q.OtherUsage, 10)
	if q.Limit < 0 {
		out["limit"] = "-1"
	}
	writeJSON(w, http.StatusOK, out)
}
