package dynamostore

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

// TestIndexItemLayout pins the index attributes of a game's item: the
// names and values the GSIs (and the SAM template) are keyed on.
func TestIndexItemLayout(t *testing.T) {
	at := time.UnixMilli(1_777_000_000_123).Add(456 * time.Microsecond) // truncated to ...123
	tests := []struct {
		name string
		ix   service.GameIndex
		want map[string]string
	}{
		{"zero index: no attributes", service.GameIndex{}, map[string]string{}},
		{"white waiting in the lobby", service.GameIndex{Players: [2]string{"p1", ""}, LobbyRoom: "free", CreatedAt: at, UpdatedAt: at.Add(time.Second), Summary: []byte("{}")},
			map[string]string{
				"idxW": "S:p1#a", "idxUpdated": "S:1777000001123#g1", "idxLobby": "S:free", "idxCreated": "S:1777000000123#g1",
				"createdAt": "N:1777000000123", "updatedAt": "N:1777000001123", "summary": "B:{}",
			}},
		{"finished, both seats, not listed", service.GameIndex{Players: [2]string{"p1", "p2"}, Finished: true, CreatedAt: at, UpdatedAt: at},
			map[string]string{
				"idxW": "S:p1#f", "idxB": "S:p2#f", "idxUpdated": "S:1777000000123#g1",
				"createdAt": "N:1777000000123", "updatedAt": "N:1777000000123", "finished": "N:1",
			}},
		{"early times are zero-padded", service.GameIndex{Players: [2]string{"", "p2"}, CreatedAt: time.UnixMilli(5), UpdatedAt: time.UnixMilli(42)},
			map[string]string{"idxB": "S:p2#a", "idxUpdated": "S:0000000000042#g1", "createdAt": "N:5", "updatedAt": "N:42"}},
	}
	base := map[string]bool{attrGameID: true, attrVersion: true, attrStateVersion: true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := service.GameRecord{GameID: "g1", Version: 1, StateVersion: 1, Index: tt.ix}
			item := encodeItem(rec)
			got := map[string]string{}
			for name, v := range item {
				if base[name] {
					continue
				}
				switch v := v.(type) {
				case *types.AttributeValueMemberS:
					got[name] = "S:" + v.Value
				case *types.AttributeValueMemberN:
					got[name] = "N:" + v.Value
				case *types.AttributeValueMemberB:
					got[name] = "B:" + string(v.Value)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("index attributes %v; want %v", got, tt.want)
			}
			for name, w := range tt.want {
				if got[name] != w {
					t.Errorf("item[%s] = %q; want %q", name, got[name], w)
				}
			}
			back, err := decodeItem(item)
			if err != nil {
				t.Fatal(err)
			}
			if !indexEqual(back.Index, tt.ix) {
				t.Errorf("decodeItem(encodeItem(index)) = %+v; want %+v (to the millisecond)", back.Index, tt.ix)
			}
		})
	}
}

func indexEqual(a, b service.GameIndex) bool {
	return a.Players == b.Players && a.Finished == b.Finished && a.LobbyRoom == b.LobbyRoom &&
		a.CreatedAt.UnixMilli() == b.CreatedAt.UnixMilli() && a.UpdatedAt.UnixMilli() == b.UpdatedAt.UnixMilli() &&
		bytes.Equal(a.Summary, b.Summary)
}

func TestDecodeIndexRejectsForeignItems(t *testing.T) {
	good := func() map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			attrGameID: &types.AttributeValueMemberS{Value: "g"}, attrVersion: number(1), attrStateVersion: number(1),
			attrCreatedAt: number(1), attrUpdatedAt: number(2), attrIdxWhite: &types.AttributeValueMemberS{Value: "p#a"},
		}
	}
	tests := []struct {
		name, attr string
		change     func(map[string]types.AttributeValue)
	}{
		{"summary without times", attrSummary, func(m map[string]types.AttributeValue) {
			delete(m, attrCreatedAt)
			delete(m, attrUpdatedAt)
			m[attrSummary] = &types.AttributeValueMemberB{Value: []byte("x")}
		}},
		{"one time only", attrUpdatedAt, func(m map[string]types.AttributeValue) { delete(m, attrUpdatedAt) }},
		{"negative time", attrCreatedAt, func(m map[string]types.AttributeValue) { m[attrCreatedAt] = number(-1) }},
		{"status disagrees", attrIdxWhite, func(m map[string]types.AttributeValue) { m[attrFinished] = number(1) }},
		{"no status", attrIdxWhite, func(m map[string]types.AttributeValue) { m[attrIdxWhite] = &types.AttributeValueMemberS{Value: "p"} }},
		{"empty player", attrIdxWhite, func(m map[string]types.AttributeValue) { m[attrIdxWhite] = &types.AttributeValueMemberS{Value: "#a"} }},
		{"finished not 1", attrFinished, func(m map[string]types.AttributeValue) { m[attrFinished] = number(2) }},
		{"summary text", attrSummary, func(m map[string]types.AttributeValue) { m[attrSummary] = &types.AttributeValueMemberS{Value: "x"} }},
		{"room number", attrIdxLobby, func(m map[string]types.AttributeValue) { m[attrIdxLobby] = number(1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			item := good()
			tt.change(item)
			_, err := decodeItem(item)
			var itemErr *ItemError
			if !errors.As(err, &itemErr) || itemErr.Attribute != tt.attr || itemErr.GameID != "g" {
				t.Fatalf("decodeItem = %v; want an *ItemError on %s of game g", err, tt.attr)
			}
		})
	}
}

// FuzzDecodeIndex: arbitrary index attributes never panic the decoder,
// and an index it accepts encodes back to the same index.
func FuzzDecodeIndex(f *testing.F) {
	f.Add("1777000000123", "1777000000124", "p1#a", "", "free", []byte("{}"), "")
	f.Add("0", "9999999999999", "a#b#f", "c#f", "", []byte(nil), "1")
	f.Add("-1", "1e3", "#", "x", "", []byte{0}, "2")
	f.Fuzz(func(t *testing.T, created, updated, white, black, room string, summary []byte, finished string) {
		item := map[string]types.AttributeValue{
			attrGameID: &types.AttributeValueMemberS{Value: "g"}, attrVersion: number(1), attrStateVersion: number(1),
		}
		for name, v := range map[string]string{attrCreatedAt: created, attrUpdatedAt: updated, attrFinished: finished} {
			if v != "" {
				item[name] = &types.AttributeValueMemberN{Value: v}
			}
		}
		for name, v := range map[string]string{attrIdxWhite: white, attrIdxBlack: black, attrIdxLobby: room} {
			if v != "" {
				item[name] = &types.AttributeValueMemberS{Value: v}
			}
		}
		if summary != nil {
			item[attrSummary] = &types.AttributeValueMemberB{Value: summary}
		}
		rec, err := decodeItem(item)
		if err != nil {
			return
		}
		again, err := decodeItem(encodeItem(rec))
		if err != nil {
			t.Fatalf("re-decoding %+v: %v", rec.Index, err)
		}
		if !indexEqual(again.Index, rec.Index) {
			t.Fatalf("round trip changed %+v into %+v", rec.Index, again.Index)
		}
	})
}
