//go:build race

package photos

// photosHeldBound is TestPhotosBatchHeldPerPicture's bound under the race
// detector: 1,249 bytes a picture measured, as without it.
const photosHeldBound = 1420
