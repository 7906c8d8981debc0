package app

// For the tests of package app_test (powercut_test.go), which import
// internal/app/photos: a queue's jobs waited for.
var WaitDone = waitDone
