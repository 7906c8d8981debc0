package cli

import (
	"strings"
	"testing"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// carrier cancel takes the delivery's id as well as a job's: the message
// and its parts are cancelled whole, its file on Drive kept, as by the
// message's id; naming one of its parts says whose part it is.
func TestCancelByTheDeliverysID(t *testing.T) {
	h := newHeldSend(t)
	h.interrupt()
	store, err := delivery.Open(delivery.Dir(h.state))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := store.List()
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %v %v", ds, err)
	}
	errs, code := h.cancel("", "cancel", ds[0].ID)
	if code != 0 || !strings.Contains(errs, "cancelled "+h.msg) || !strings.Contains(errs, "Kept there (not asked: no terminal)") || strings.Contains(errs, "is part of") {
		t.Fatalf("cancel %s: %d %s", ds[0].ID, code, errs)
	}
	if len(h.driveFiles()) != 1 || h.messages() != 0 {
		t.Fatalf("files %v, %d messages", h.driveFiles(), h.messages())
	}
	h.noneLeft()
	var part string
	for _, m := range ds[0].Members {
		if m.Role == delivery.RoleDriveFile {
			part = m.Job
		}
	}
	errs, code = h.cancel("", "cancel", part, "--drive", "delete")
	if code != 0 || !strings.Contains(errs, "job "+part+" is part of "+h.msg) || !strings.Contains(errs, "cancelling the whole message") || len(h.driveFiles()) != 0 {
		t.Fatalf("cancel %s --drive delete: %d %s; files %v", part, code, errs, h.driveFiles())
	}
	for _, r := range h.records() {
		if r.ID == h.msg && r.State != transfer.StateCancelled {
			t.Fatalf("the message is %s", r.State)
		}
	}
}
