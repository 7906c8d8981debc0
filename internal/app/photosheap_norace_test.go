//go:build !race

package app

// photosHeldBound is TestPhotosBatchHeldPerPicture's bound: 1,415 to
// 1,498 bytes a picture measured (the queue's jobs whole, about 1,350 of
// them), 1,590 to 1,595 with each file's stamp held in a map to its call
// and each upload's URL a string of its own, as before the stamps went to
// a file.
const photosHeldBound = 1560
