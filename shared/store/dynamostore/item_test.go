package dynamostore

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

func TestNumberSize(t *testing.T) {
	// Expected sizes follow DynamoDB's base-100 layout: 1 byte of exponent
	// plus one per significant digit pair aligned on the decimal point.
	tests := []struct {
		n    string
		want int
	}{
		{"0", 1},
		{"1", 2},
		{"9", 2},
		{"10", 2},   // "10" is one pair
		{"12", 2},   // "12"
		{"100", 2},  // 1|00 → one significant pair
		{"120", 3},  // 1|20
		{"123", 3},  // 1|23
		{"1000", 2}, // 10|00
		{"1234", 3}, // 12|34
		{"10203", 4},
		{"1800000000000", 3}, // 1|80|00|... → 2 pairs
		{"1900000000", 2},    // 19|00|... → 1 pair
		{"9223372036854775807", 11},
		{"-1", 3},
		{"-9223372036854775808", 12},
	}
	for _, tt := range tests {
		if got := numberSize(tt.n); got != tt.want {
			t.Errorf("numberSize(%q) = %d; want %d", tt.n, got, tt.want)
		}
	}
}

func TestItemSizeCountsNamesAndValues(t *testing.T) {
	rec := service.GameRecord{GameID: "abc", Version: 12, StateVersion: 1, State: make([]byte, 100)}
	// gameId 6+3, version 7+2, stateVersion 12+2, state 5+100
	const want = 9 + 9 + 14 + 105
	if got := itemSize(encodeItem(rec)); got != want {
		t.Errorf("itemSize(%+v) = %d; want %d", rec, got, want)
	}
}

// FuzzDecodeItem feeds arbitrary attribute values to the decoder: it must
// never panic, and whatever it accepts must encode back to an item that
// decodes to the same record.
func FuzzDecodeItem(f *testing.F) {
	f.Add("g1", "1", "1", []byte("state"), "1800000000000", "", true)
	f.Add("g2", "0", "1", []byte{}, "", "1900000000", false)
	f.Add("", "-5", "99999999999", []byte{0}, "x", "1e3", true)
	f.Add("g3", "9223372036854775808", "1", []byte(nil), "-1", "-1", true)
	f.Fuzz(func(t *testing.T, id, version, stateVersion string, state []byte, deadline, expires string, withState bool) {
		item := map[string]types.AttributeValue{
			attrGameID:       &types.AttributeValueMemberS{Value: id},
			attrVersion:      &types.AttributeValueMemberN{Value: version},
			attrStateVersion: &types.AttributeValueMemberN{Value: stateVersion},
		}
		if withState {
			item[attrState] = &types.AttributeValueMemberB{Value: state}
		}
		if deadline != "" {
			item[attrDeadline] = &types.AttributeValueMemberN{Value: deadline}
		}
		if expires != "" {
			item[attrExpiresAt] = &types.AttributeValueMemberN{Value: expires}
		}
		rec, err := decodeItem(item)
		if err != nil {
			return
		}
		if rec.Version < 1 || rec.StateVersion < 0 || rec.StateVersion > math.MaxInt32 {
			t.Fatalf("decodeItem accepted out-of-range numbers: %+v", rec)
		}
		again, err := decodeItem(encodeItem(rec))
		if err != nil {
			t.Fatalf("decodeItem(encodeItem(%+v)) = %v", rec, err)
		}
		if again.GameID != rec.GameID || again.Version != rec.Version || again.StateVersion != rec.StateVersion ||
			!bytes.Equal(again.State, rec.State) || !again.Deadline.Equal(rec.Deadline) || !again.ExpiresAt.Equal(rec.ExpiresAt) {
			t.Fatalf("round trip changed the record: %+v → %+v", rec, again)
		}
		if size := itemSize(encodeItem(rec)); size < len(rec.State) {
			t.Fatalf("itemSize = %d, less than the state alone (%d)", size, len(rec.State))
		}
	})
}

// TestStateCompression: a state past a kilobyte is stored compressed and
// marked, read back as it was; a small or incompressible one is stored as
// it is; an unknown encoding is an ItemError.
func TestStateCompression(t *testing.T) {
	text := []byte(strings.Repeat(`{"type":"moved","color":"white","uci":"e2e4","san":"e4"}`, 100))
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for _, tt := range []struct {
		name       string
		state      []byte
		compressed bool
	}{
		{"small", []byte("{}"), false},
		{"text", text, true},
		{"incompressible", random, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := service.GameRecord{GameID: "g1", Version: 1, StateVersion: 2, State: tt.state}
			item := encodeItem(rec)
			_, marked := item[attrEncoding]
			stored := item[attrState].(*types.AttributeValueMemberB).Value
			if marked != tt.compressed || (tt.compressed && len(stored) >= len(tt.state)/4) {
				t.Errorf("stored %d of %d bytes, marked %v; want compressed %v", len(stored), len(tt.state), marked, tt.compressed)
			}
			got, err := decodeItem(item)
			if err != nil || !bytes.Equal(got.State, tt.state) {
				t.Fatalf("decodeItem = %d bytes, %v; want the state back", len(got.State), err)
			}
		})
	}
	item := encodeItem(service.GameRecord{GameID: "g1", Version: 1, StateVersion: 2, State: text})
	item[attrEncoding] = &types.AttributeValueMemberS{Value: "lz9"}
	var ie *ItemError
	if _, err := decodeItem(item); !errors.As(err, &ie) || ie.Attribute != attrState {
		t.Errorf("decodeItem with encoding lz9 = %v; want an ItemError on %s", err, attrState)
	}
}
