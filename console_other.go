//go:build !windows

package main

// attachConsole: a command started from a terminal has it already.
func attachConsole() {}

// systemAlert: on Linux and macOS the terminal's line is the word given;
// a desktop without OpenGL has no other way to show one that is sure to
// work.
func systemAlert(title, text string) {}
