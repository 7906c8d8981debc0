//go:build !race

package photos

// photosHeldBound is TestPhotosBatchHeldPerPicture's bound: 1,246 to
// 1,334 bytes a picture measured (the queue's jobs whole, about 1,180 of
// them); 1,431 to 1,439 with each file's stamp held in a map to its call
// and each upload's URL a string of its own, and 1,590 with each job's
// lock an os.File besides, as before issue 29's h29c.
const photosHeldBound = 1420
