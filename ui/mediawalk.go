package ui

import "carrier/internal/app"

// mediaWalk turns what was dropped or picked into files, in order, as
// `carrier photos` does with the folders it is given (app.WalkMedia).
func mediaWalk(paths []string) (files []string, problems []error) { return app.WalkMedia(paths) }
