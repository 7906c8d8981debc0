package main

import (
	"fmt"
	"os"

	"github.com/go-gl/glfw/v3.4/glfw"
)

// checkGraphics opens and closes an invisible window with the OpenGL
// context Fyne asks for, so that a machine whose graphics driver cannot
// give one hears why in words (Fyne would log a line and stop, or exit).
// GLFW is left as it was found: Fyne initialises it again its own way.
func checkGraphics() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if err := glfw.Init(); err != nil {
		return err
	}
	defer glfw.Terminate()
	glfw.WindowHint(glfw.Visible, glfw.False)
	glfw.WindowHint(glfw.ContextVersionMajor, 2)
	glfw.WindowHint(glfw.ContextVersionMinor, 1)
	w, err := glfw.CreateWindow(16, 16, "Carrier", nil, nil)
	if err != nil {
		return err
	}
	w.Destroy()
	return nil
}

// noGraphics tells the person, on the terminal and where the system can
// show it without OpenGL, that the window cannot open and what still works.
func noGraphics(err error) int {
	msg := "Carrier's window cannot open: the system gave it no OpenGL 2.1 window (" + err.Error() + ").\n\n" +
		"On a desktop, updating the graphics driver usually mends this. Uploads already queued are kept, " +
		"and the commands work without a window: run `carrier --help` in a terminal."
	fmt.Fprintln(os.Stderr, "carrier:", msg)
	systemAlert("Carrier cannot open its window", msg)
	return 1
}
