package delivery_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
)

// app keeps what a person composed in the delivery, converting through
// JSON: delivery's Composed mirrors app's field for field, and a file a
// Carrier before deliveries wrote (STATE/composed/*.json) reads as
// delivery's the same.
func TestComposedMirrorsApps(t *testing.T) {
	a, d := reflect.TypeFor[message.Composed](), reflect.TypeFor[delivery.Composed]()
	if a.NumField() != d.NumField() {
		t.Fatalf("message.Composed has %d fields, delivery.Composed %d", a.NumField(), d.NumField())
	}
	for i := range a.NumField() {
		fa, fd := a.Field(i), d.Field(i)
		if fa.Name != fd.Name || fa.Tag != fd.Tag || fa.Type.Kind() != fd.Type.Kind() {
			t.Errorf("field %d: app's %s %s %q, delivery's %s %s %q", i, fa.Name, fa.Type, fa.Tag, fd.Name, fd.Type, fd.Tag)
		}
	}
	kept := message.Composed{To: []string{"bob@example.com"}, Bcc: []string{"eve@example.com"}, Subject: "Report", Text: "Here.", HTML: "<p>Here.</p>",
		Attachments: []string{"/home/ann/big.mov"}, Method: compose.Draft, DraftID: "r-42", Choose: map[string]bool{"/home/ann/big.mov": true},
		Share: message.ShareAnyone, Expiry: 48 * time.Hour}
	data, err := json.Marshal(kept)
	if err != nil {
		t.Fatal(err)
	}
	var got delivery.Composed
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(got)
	if string(back) != string(data) || got.Share != delivery.ShareAnyone {
		t.Fatalf("app's\n%s\nreads as\n%s", data, back)
	}
}
