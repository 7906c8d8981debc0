package delivery_test

import (
	"encoding/json"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/delivery"
)

// What a person composed is kept in the delivery (message.Composed is
// delivery.Composed): a file a Carrier before deliveries wrote
// (STATE/composed/*.json) reads as the delivery's the same.
func TestComposedKeptFileReadsAsTheDeliverys(t *testing.T) {
	kept := delivery.Composed{To: []string{"bob@example.com"}, Bcc: []string{"eve@example.com"}, Subject: "Report", Text: "Here.", HTML: "<p>Here.</p>",
		Attachments: []string{"/home/ann/big.mov"}, Method: compose.Draft, DraftID: "r-42", Choose: map[string]bool{"/home/ann/big.mov": true},
		Share: delivery.ShareAnyone, Expiry: 48 * time.Hour}
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
