package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestItemSize(t *testing.T) {
	image := map[string]events.DynamoDBAttributeValue{
		"gameId":  events.NewStringAttribute("abc"),                                                                 // 6 + 3
		"state":   events.NewBinaryAttribute(make([]byte, 100)),                                                     // 5 + 100
		"version": events.NewNumberAttribute("12345"),                                                               // 7 + 4
		"done":    events.NewBooleanAttribute(true),                                                                 // 4 + 1
		"tags":    events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewStringAttribute("ab")}),        // 4 + 3 + 1 + 2
		"m":       events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"k": events.NewNullAttribute()}), // 1 + 3 + 1 + 1 + 1
	}
	if got, want := itemSize(image), 9+105+11+5+10+7; got != want {
		t.Errorf("itemSize = %d; want %d", got, want)
	}
	if itemSize(nil) != 0 {
		t.Error("empty image has a size")
	}
	for _, c := range []struct {
		s    string
		want int
	}{{"0", 1}, {"7", 2}, {"100", 2}, {"-12.5", 3}, {"123456", 4}} {
		if got := numberSize(c.s); got != c.want {
			t.Errorf("numberSize(%q) = %d; want %d", c.s, got, c.want)
		}
	}
	big := map[string]events.DynamoDBAttributeValue{"s": events.NewStringAttribute(strings.Repeat("x", 2047))}
	if writeUnits(0, itemSize(big)) != 2 || writeUnits(3000, 10) != 3 || writeUnits(0, 0) != 1 || readUnits(4096) != 1 || readUnits(4097) != 2 {
		t.Error("request units")
	}
}
