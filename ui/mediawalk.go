package ui

import "carrier/internal/app/photos"

// mediaWalk turns what was dropped or picked into files, in order, as
// `carrier photos` does with the folders it is given (photos.WalkMedia).
func mediaWalk(paths []string) (files []string, problems []error) { return photos.WalkMedia(paths) }
