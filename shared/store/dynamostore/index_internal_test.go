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
		{"white waiting in the lobby", service.GameIndex{Players: [2]string{"p1", ""}, LobbyRoom: "free", CreatedAt: at, UpdatedAt: at.Add(time.Second), ListedAt: at, Summary: []byte("{}")},
			map[string]string{
				"idxW": "S:p1#a", "idxUpdated": "S:1777000000123#g1", "idxLobby": "S:free", "idxCreated": "S:1777000000123#g1",
				"createdAt": "N:1777000000123", "listedAt": "N:1777000000123", "writtenAt": "N:1777000001123", "summary": "B:{}",
			}},
		{"finished, both seats, not listed", service.GameIndex{Players: [2]string{"p1", "p2"}, Finished: true, CreatedAt: at, UpdatedAt: at.Add(time.Minute), ListedAt: at.Add(time.Second)},
			map[string]string{
				"idxW": "S:p1#f", "idxB": "S:p2#f", "idxUpdated": "S:1777000001123#g1",
				"createdAt": "N:1777000000123", "listedAt": "N:1777000001123", "writtenAt": "N:1777000060123", "finished": "N:1",
			}},
		{"early times are zero-padded", service.GameIndex{Players: [2]string{"", "p2"}, CreatedAt: time.UnixMilli(5), UpdatedAt: time.UnixMilli(42), ListedAt: time.UnixMilli(7)},
			map[string]string{"idxB": "S:p2#a", "idxUpdated": "S:0000000000007#g1", "createdAt": "N:5", "listedAt": "N:7", "writtenAt": "N:42"}},
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
		a.ListedAt.UnixMilli() == b.ListedAt.UnixMilli() && bytes.Equal(a.Summary, b.Summary)
}

// TestLegacyIndexItem: an item written before listedAt and writtenAt (its
// write time in updatedAt, its sort key made of it) reads with that time
// as its UpdatedAt and ListedAt, so the service's next write of a move
// keeps its sort key; only updatedAt goes.
func TestLegacyIndexItem(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	legacy := map[string]types.AttributeValue{
		attrGameID: s("g1"), attrVersion: number(4), attrStateVersion: number(1),
		attrIdxWhite: s("p1#a"), attrIdxBlack: s("p2#a"), attrIdxUpdated: s("1777000060000#g1"),
		attrCreatedAt: number(1_777_000_000_000), attrUpdatedAt: number(1_777_000_060_000), attrSummary: &types.AttributeValueMemberB{Value: []byte("{}")},
	}
	rec, err := decodeItem(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Index.UpdatedAt.UnixMilli() != 1_777_000_060_000 || rec.Index.ListedAt.UnixMilli() != 1_777_000_060_000 {
		t.Fatalf("legacy index = %+v; want UpdatedAt = ListedAt = its updatedAt", rec.Index)
	}
	moved := rec
	moved.Version = 5
	moved.Index.UpdatedAt = time.UnixMilli(1_777_000_090_000)
	item := encodeItem(moved)
	if got := item[attrIdxUpdated].(*types.AttributeValueMemberS).Value; got != "1777000060000#g1" {
		t.Errorf("sort key after a move = %q; want the legacy one kept", got)
	}
	if _, found := item[attrUpdatedAt]; found {
		t.Error("updatedAt still written; the indexes project it, so a move would rewrite every entry")
	}
	// Without a sort key (no registered player), its updatedAt is its
	// ListedAt.
	delete(legacy, attrIdxWhite)
	delete(legacy, attrIdxBlack)
	delete(legacy, attrIdxUpdated)
	legacy[attrUpdatedAt] = number(1_777_000_070_000)
	if rec, err := decodeItem(legacy); err != nil || rec.Index.ListedAt.UnixMilli() != 1_777_000_070_000 {
		t.Errorf("legacy unlisted item = %+v, %v; want ListedAt = its updatedAt", rec.Index, err)
	}
	legacy[attrIdxUpdated] = s("garbage")
	var itemErr *ItemError
	if _, err := decodeItem(legacy); !errors.As(err, &itemErr) || itemErr.Attribute != attrIdxUpdated {
		t.Errorf("legacy item with a malformed sort key: %v; want an *ItemError on %s", err, attrIdxUpdated)
	}
}

func TestDecodeIndexRejectsForeignItems(t *testing.T) {
	good := func() map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			attrGameID: &types.AttributeValueMemberS{Value: "g"}, attrVersion: number(1), attrStateVersion: number(1),
			attrCreatedAt: number(1), attrWrittenAt: number(2), attrListedAt: number(1), attrIdxWhite: &types.AttributeValueMemberS{Value: "p#a"},
		}
	}
	tests := []struct {
		name, attr string
		change     func(map[string]types.AttributeValue)
	}{
		{"summary without times", attrSummary, func(m map[string]types.AttributeValue) {
			delete(m, attrCreatedAt)
			delete(m, attrWrittenAt)
			delete(m, attrListedAt)
			m[attrSummary] = &types.AttributeValueMemberB{Value: []byte("x")}
		}},
		{"no time of the write", attrWrittenAt, func(m map[string]types.AttributeValue) { delete(m, attrWrittenAt) }},
		{"no creation", attrCreatedAt, func(m map[string]types.AttributeValue) { delete(m, attrCreatedAt) }},
		{"listedAt out of range", attrListedAt, func(m map[string]types.AttributeValue) { m[attrListedAt] = number(1e13) }},
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
	f.Add("1777000000123", "1777000000124", "", "", "p1#a", "", "free", []byte("{}"), "")
	f.Add("0", "", "9999999999999", "5", "a#b#f", "c#f", "", []byte(nil), "1")
	f.Add("-1", "1e3", "", "", "#", "x", "", []byte{0}, "2")
	f.Fuzz(func(t *testing.T, created, updated, written, listed, white, black, room string, summary []byte, finished string) {
		item := map[string]types.AttributeValue{
			attrGameID: &types.AttributeValueMemberS{Value: "g"}, attrVersion: number(1), attrStateVersion: number(1),
		}
		for name, v := range map[string]string{attrCreatedAt: created, attrUpdatedAt: updated, attrWrittenAt: written, attrListedAt: listed, attrFinished: finished} {
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
