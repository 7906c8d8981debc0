//go:build !linux && !windows && !darwin

package platform

// ClaimInstance is not done on this system yet: every launch opens a
// window of its own, and `carrier FILE...` opens one with the files.
func ClaimInstance(appID, dataDir string) (*Instance, error) {
	return nil, ErrNoSingleInstance
}

// HandOver has nowhere to hand to on this system.
func HandOver(appID, dataDir string, items []string) error {
	return ErrNoSingleInstance
}
