package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"chessapi/shared/game"
)

// TestEncodeOmitsAViewPastTheMessageLimit: API Gateway posts at most 128 KB;
// a message whose view would pass it goes without the view, marked, and
// keeps its version and events.
func TestEncodeOmitsAViewPastTheMessageLimit(t *testing.T) {
	small := &game.View{GameID: "g", Version: 7, FEN: "8/8/8/8/8/8/8/8 w - - 0 1"}
	msg := encodeForGateway(ChangeMessage("g", 7, json.RawMessage(`[{"type":"moved"}]`), small, Korean))
	if bytes.Contains(msg, []byte(`"gameOmitted"`)) || !bytes.Contains(msg, []byte(`"game":`)) {
		t.Errorf("small message = %s; want the view", msg)
	}
	big := &game.View{GameID: "g", Version: 7}
	for range 3000 {
		big.Moves = append(big.Moves, game.MoveRecord{UCI: "e2e4", SAN: "e4"})
	}
	msg = encodeForGateway(ChangeMessage("g", 7, json.RawMessage(`[{"type":"moved"}]`), big, Korean))
	var got struct {
		Version     int64           `json:"version"`
		Events      json.RawMessage `json:"events"`
		Game        json.RawMessage `json:"game"`
		GameOmitted bool            `json:"gameOmitted"`
	}
	if err := json.Unmarshal(msg, &got); err != nil {
		t.Fatal(err)
	}
	if len(msg) > MaxMessageBytes || got.Game != nil || !got.GameOmitted || got.Version != 7 || string(got.Events) != `[{"type":"moved"}]` {
		t.Errorf("large message (%d bytes): game %d bytes, omitted %v, version %d, events %s; want the view left out and marked, the rest kept",
			len(msg), len(got.Game), got.GameOmitted, got.Version, got.Events)
	}
}
