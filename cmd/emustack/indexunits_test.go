package main

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestIndexWriteUnits: the GSI write units of a write, as DynamoDB bills
// them: an entry put or deleted is one write, a key change two, a
// projected attribute change one, anything else none.
func TestIndexWriteUnits(t *testing.T) {
	s := events.NewStringAttribute
	item := func(kv ...string) map[string]events.DynamoDBAttributeValue {
		m := map[string]events.DynamoDBAttributeValue{"gameId": s("g1"), "state": events.NewBinaryAttribute(make([]byte, 3000))}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = s(kv[i+1])
		}
		return m
	}
	anonymous := item("updatedAt", "1")
	registered := func(updated, status, summary string) map[string]events.DynamoDBAttributeValue {
		return item("idxW", "pW#"+status, "idxB", "pB#"+status, "idxUpdated", updated, "updatedAt", updated, "summary", summary)
	}
	listed := func(sortTime, written, status string) map[string]events.DynamoDBAttributeValue {
		return item("idxW", "pW#"+status, "idxB", "pB#"+status, "idxUpdated", sortTime, "listedAt", sortTime, "writtenAt", written, "summary", "x")
	}
	for _, tt := range []struct {
		name     string
		old, new map[string]events.DynamoDBAttributeValue
		want     int
	}{
		{"anonymous create", nil, anonymous, 0},
		{"anonymous move", anonymous, item("updatedAt", "2"), 0},
		{"registered create: two entries put", nil, registered("1", "a", "x"), 2},
		{"registered move: both entries move (delete + put)", registered("1", "a", "x"), registered("2", "a", "y"), 4},
		{"same keys, projected summary changed: one update each", registered("1", "a", "x"), registered("1", "a", "y"), 2},
		{"nothing indexed changed", registered("1", "a", "x"), registered("1", "a", "x"), 0},
		{"finished: both partitions change", registered("2", "a", "y"), registered("3", "f", "z"), 4},
		{"lobby entry leaves", item("idxLobby", "free", "idxCreated", "1"), anonymous, 1},
		// The layout since issue 22: the time of the write is writtenAt,
		// which no index projects, and the sort key is the start or end.
		{"registered move: only writtenAt changes", listed("1", "1", "a"), listed("1", "2", "a"), 0},
		{"registered start or end: both entries move", listed("1", "2", "a"), listed("3", "3", "f"), 4},
		{"legacy item's first write drops the projected updatedAt: one update each", registered("1", "a", "x"), listed("1", "2", "a"), 2},
	} {
		if got := indexWriteUnits(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: %d units; want %d", tt.name, got, tt.want)
		}
	}
}
