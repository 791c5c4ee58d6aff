package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"chessapi/shared/service"
)

// encodeValue is the value the store writes for rec.
func encodeValue(rec service.GameRecord) []byte {
	value, _ := encodeRecord(rec, true)
	return value
}

func TestDecodeRejectsCorruptValues(t *testing.T) {
	valid := encodeValue(service.GameRecord{GameID: "g", Version: 5, StateVersion: 1, State: []byte("s"), Deadline: time.UnixMilli(1)})
	compressed := encodeValue(service.GameRecord{GameID: "g", Version: 5, StateVersion: 1, State: bytes.Repeat([]byte("state "), 200)})
	if compressed[3]&hasS2 == 0 {
		t.Fatal("a repetitive state was not compressed")
	}
	tests := []struct {
		name  string
		value []byte
	}{
		{"empty", nil},
		{"unknown format", append([]byte{2}, valid[1:]...)},
		{"truncated version", []byte{formatV1, 0x80}},
		{"zero version", []byte{formatV1, 0, 2, 0}},
		{"negative state version", []byte{formatV1, 2, 1, 0}},
		{"missing flags", []byte{formatV1, 2, 2}},
		{"unknown flag", []byte{formatV1, 2, 2, 0x80}},
		{"missing deadline", []byte{formatV1, 2, 2, hasDeadline}},
		{"missing expiry", []byte{formatV1, 2, 2, hasExpiry}},
		{"overflowing varint", append([]byte{formatV1}, bytes.Repeat([]byte{0xff}, 11)...)},
		{"missing index", []byte{formatV1, 2, 2, hasIndex}},
		{"index finished flag 2", []byte{formatV1, 2, 2, hasIndex, 2, 2, 2, 0, 0, 0, 0}},
		{"negative index time", []byte{formatV1, 2, 2, hasIndex, 0, 1, 2, 0, 0, 0, 0}},
		{"index time past 2286", append([]byte{formatV1, 2, 2, hasIndex, 0}, binary.AppendVarint(nil, 1e13)...)},
		{"index string past the end", []byte{formatV1, 2, 2, hasIndex, 0, 2, 2, 5, 'a'}},
		{"index strings missing", []byte{formatV1, 2, 2, hasIndex, 0, 2, 2, 0, 0}},
		{"compressed state not S2", []byte{formatV1, 2, 2, hasS2, 0xff, 0xff, 0xff}},
		{"compressed state over the limit", append([]byte{formatV1, 2, 2, hasS2}, binary.AppendUvarint(nil, maxStateSize+1)...)},
		{"compressed state truncated", compressed[:len(compressed)-3]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := decodeRecord("g", tt.value)
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("decodeRecord(%x) = %+v, %v; want an error wrapping errCorrupt", tt.value, rec, err)
			}
		})
	}
}

func TestRecordIndexRoundTrip(t *testing.T) {
	at := time.UnixMilli(1_777_000_000_123)
	rec := service.GameRecord{GameID: "g", Version: 2, StateVersion: 1, State: []byte("state"), Index: service.GameIndex{
		Players: [2]string{"white", ""}, Finished: true, LobbyRoom: "free", CreatedAt: at, UpdatedAt: at.Add(time.Second), ListedAt: at.Add(time.Minute), Summary: []byte{0, 1},
	}}
	value := encodeValue(rec)
	got, err := decodeRecord("g", value)
	if err != nil {
		t.Fatal(err)
	}
	if !indexEqual(got.Index, rec.Index) || !bytes.Equal(got.State, rec.State) {
		t.Fatalf("decodeRecord(encodeValue(%+v)) = %+v", rec, got)
	}
	// The summary is copied out of the value.
	value[len(value)-len(rec.State)-1] = 9
	if got.Index.Summary[1] != 1 {
		t.Error("the decoded summary aliases the stored value")
	}
	// Without an index the value is the format every earlier version wrote.
	plain := rec
	plain.Index = service.GameIndex{}
	if v := encodeValue(plain); v[3] != 0 {
		t.Errorf("a record without an index has flags %#x; want none", v[3])
	}
}

func indexEqual(a, b service.GameIndex) bool {
	return a.Players == b.Players && a.Finished == b.Finished && a.LobbyRoom == b.LobbyRoom &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) && a.ListedAt.Equal(b.ListedAt) && bytes.Equal(a.Summary, b.Summary)
}

func TestRecordRoundTrip(t *testing.T) {
	rec := service.GameRecord{
		GameID: "g", Version: 1 << 50, StateVersion: 3, State: []byte{0, 255, 0},
		Deadline: time.Unix(1_800_000_000, 1), ExpiresAt: time.Unix(1_900_000_000, 0),
	}
	got, err := decodeRecord("g", encodeValue(rec))
	if err != nil {
		t.Fatal(err)
	}
	wantDeadline := time.UnixMilli(1_800_000_000_001) // rounded up to the millisecond
	if got.Version != rec.Version || got.StateVersion != 3 || !bytes.Equal(got.State, rec.State) ||
		!got.Deadline.Equal(wantDeadline) || !got.ExpiresAt.Equal(rec.ExpiresAt) {
		t.Fatalf("decodeRecord(encodeValue(%+v)) = %+v", rec, got)
	}
}

// FuzzDecodeRecord: arbitrary bytes never panic the decoder, and anything it
// accepts re-encodes to a value that decodes to the same record.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeValue(service.GameRecord{GameID: "g", Version: 1, StateVersion: 1}))
	f.Add(encodeValue(service.GameRecord{GameID: "g", Version: 7, StateVersion: 2, State: []byte("state"),
		Deadline: time.UnixMilli(1_800_000_000_000), ExpiresAt: time.Unix(1_900_000_000, 0)}))
	f.Add([]byte{formatV1, 2, 2, hasDeadline | hasExpiry, 1, 1})
	f.Add(encodeValue(service.GameRecord{GameID: "g", Version: 3, StateVersion: 1, State: []byte("s"), Index: service.GameIndex{
		Players: [2]string{"w", "b"}, LobbyRoom: "r", CreatedAt: time.UnixMilli(5), UpdatedAt: time.UnixMilli(6), ListedAt: time.UnixMilli(5), Summary: []byte("sum"),
	}}))
	f.Add(legacyIndexedValue(1, time.UnixMilli(5), time.UnixMilli(6), "w", "b", "s"))
	f.Add(encodeValue(service.GameRecord{GameID: "g", Version: 2, StateVersion: 2, State: bytes.Repeat([]byte("e2e4 "), 200)}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, value []byte) {
		rec, err := decodeRecord("g", value)
		if err != nil {
			return
		}
		again, err := decodeRecord("g", encodeValue(rec))
		if err != nil {
			t.Fatalf("re-decoding %+v: %v", rec, err)
		}
		if again.Version != rec.Version || again.StateVersion != rec.StateVersion || !bytes.Equal(again.State, rec.State) ||
			!again.Deadline.Equal(rec.Deadline) || !again.ExpiresAt.Equal(rec.ExpiresAt) || !indexEqual(again.Index, rec.Index) {
			t.Fatalf("round trip changed %+v into %+v", rec, again)
		}
	})
}
