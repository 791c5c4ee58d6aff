package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"chessapi/shared/game"
)

// TestEncodeOmitsAViewPastTheMessageLimit: API Gateway posts at most 128 KB;
// a subscribed whose view would pass it goes without the view, marked, and
// keeps its version and missed events.
func TestEncodeOmitsAViewPastTheMessageLimit(t *testing.T) {
	small := &game.View{GameID: "g", Version: 7, FEN: "8/8/8/8/8/8/8/8 w - - 0 1"}
	st := &game.State{GameID: "g", Version: 7}
	msg := encodeForGateway(SubscribedMessage(st, small, nil, Korean))
	if bytes.Contains(msg, []byte(`"gameOmitted"`)) || !bytes.Contains(msg, []byte(`"game":`)) {
		t.Errorf("small message = %s; want the view", msg)
	}
	big := &game.View{GameID: "g", Version: 7}
	for range 3000 {
		big.Moves = append(big.Moves, game.MoveRecord{UCI: "e2e4", SAN: "e4"})
	}
	msg = encodeForGateway(SubscribedMessage(st, big, nil, Korean))
	var got struct {
		Version     int64           `json:"version"`
		Missed      json.RawMessage `json:"missed"`
		Game        json.RawMessage `json:"game"`
		GameOmitted bool            `json:"gameOmitted"`
	}
	if err := json.Unmarshal(msg, &got); err != nil {
		t.Fatal(err)
	}
	if len(msg) > MaxMessageBytes || got.Game != nil || !got.GameOmitted || got.Version != 7 || string(got.Missed) != `[]` {
		t.Errorf("large message (%d bytes): game %d bytes, omitted %v, version %d, missed %s; want the view left out and marked, the rest kept",
			len(msg), len(got.Game), got.GameOmitted, got.Version, got.Missed)
	}
}
