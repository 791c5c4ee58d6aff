package main

import (
	"maps"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/store/dynamostore"
)

// itemSize is a DynamoDB item's size as DynamoDB bills it, from a stream
// image: the UTF-8 length of each attribute name plus its value's size
// (strings by UTF-8 length, binaries by length, numbers about one byte per
// two significant digits plus one, booleans and nulls one byte, lists and
// maps three bytes plus their elements and one byte each). The figure is
// what the request units of a write (1 KB each) and a strongly consistent
// read (4 KB each) are counted from (the DynamoDB developer guide, "Item
// sizes and formats").
func itemSize(image map[string]events.DynamoDBAttributeValue) int {
	n := 0
	for name, v := range image {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v events.DynamoDBAttributeValue) int {
	switch v.DataType() {
	case events.DataTypeString:
		return len(v.String())
	case events.DataTypeBinary:
		return len(v.Binary())
	case events.DataTypeNumber:
		return numberSize(v.Number())
	case events.DataTypeBoolean, events.DataTypeNull:
		return 1
	case events.DataTypeStringSet:
		n := 0
		for _, s := range v.StringSet() {
			n += len(s)
		}
		return n
	case events.DataTypeNumberSet:
		n := 0
		for _, s := range v.NumberSet() {
			n += numberSize(s)
		}
		return n
	case events.DataTypeBinarySet:
		n := 0
		for _, b := range v.BinarySet() {
			n += len(b)
		}
		return n
	case events.DataTypeList:
		n := 3
		for _, e := range v.List() {
			n += 1 + valueSize(e)
		}
		return n
	case events.DataTypeMap:
		n := 3
		for k, e := range v.Map() {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize: about one byte per two significant digits, plus one.
func numberSize(s string) int {
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
	digits = strings.TrimRight(digits, "0")
	return (len(digits)+1)/2 + 1
}

// writeUnits are the on-demand write request units of a write that
// replaced an item of oldSize bytes with one of newSize: one per started
// KB of the larger.
func writeUnits(oldSize, newSize int) int {
	return max(1, (max(oldSize, newSize)+1023)/1024)
}

// readUnits are the read request units of a strongly consistent read of an
// item of size bytes: one per started 4 KB.
func readUnits(size int) int {
	return max(1, (size+4095)/4096)
}

// indexWriteUnits are the write request units a write from old to new
// costs in the games table's global secondary indexes (the DynamoDB
// developer guide, "Global secondary indexes", GSI.Writes): for each index
// an item enters (1 put), leaves (1 delete), stays in under another key (a
// delete and a put: "two writes are required"), or stays in under the
// same key with a projected attribute changed (1 update); each per started
// KB of the index entry (its keys and projected attributes). A write that
// changes nothing the index holds costs it nothing.
func indexWriteUnits(old, new map[string]events.DynamoDBAttributeValue) int {
	units := 0
	for _, ix := range dynamostore.GamesIndexes() {
		before, inBefore := indexEntry(old, ix)
		after, inAfter := indexEntry(new, ix)
		switch {
		case inBefore && inAfter && sameKeys(before, after, ix):
			if !sameEntry(before, after) {
				units += writeUnits(itemSize(before), itemSize(after))
			}
		default:
			if inBefore {
				units += writeUnits(itemSize(before), 0)
			}
			if inAfter {
				units += writeUnits(0, itemSize(after))
			}
		}
	}
	return units
}

// indexEntry is what index ix holds of an item: the table's key, the
// index's keys and the projected attributes; none when the item lacks an
// index key (the indexes are sparse).
func indexEntry(item map[string]events.DynamoDBAttributeValue, ix dynamostore.GamesIndex) (map[string]events.DynamoDBAttributeValue, bool) {
	pk, okP := item[ix.PartitionKey]
	sk, okS := item[ix.SortKey]
	if !okP || !okS {
		return nil, false
	}
	entry := map[string]events.DynamoDBAttributeValue{ix.PartitionKey: pk, ix.SortKey: sk}
	if id, ok := item["gameId"]; ok {
		entry["gameId"] = id
	}
	for _, a := range ix.NonKeyAttributes {
		if v, ok := item[a]; ok {
			entry[a] = v
		}
	}
	return entry, true
}

func sameKeys(a, b map[string]events.DynamoDBAttributeValue, ix dynamostore.GamesIndex) bool {
	return sameValue(a[ix.PartitionKey], b[ix.PartitionKey]) && sameValue(a[ix.SortKey], b[ix.SortKey])
}

func sameEntry(a, b map[string]events.DynamoDBAttributeValue) bool {
	return maps.EqualFunc(a, b, sameValue)
}

// sameValue compares two attribute values by their JSON form (the
// stream's own encoding).
func sameValue(a, b events.DynamoDBAttributeValue) bool {
	ja, errA := a.MarshalJSON()
	jb, errB := b.MarshalJSON()
	return errA == nil && errB == nil && string(ja) == string(jb)
}
