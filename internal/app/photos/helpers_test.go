package photos

import (
	"encoding/json"

	"carrier/internal/app"
	"carrier/transfer"
)

// openQueue opens the app's queue on cfg, with its spool in the state
// folder, and returns its Google Photos side.
func openQueue(cfg transfer.Config) (*Queue, error) {
	q, err := app.OpenQueue(cfg, app.NewSpool(app.SpoolDir(cfg.StateDir)))
	if err != nil {
		return nil, err
	}
	return Of(q), nil
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
