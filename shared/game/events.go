package game

import (
	"fmt"
	"strconv"
)

// EventType names something that happened in a game (seeds/000 §8.2). The
// values are an append-only enum: events are stored in the request log, so
// existing numbers and spellings never change; new kinds go at the end.
type EventType uint8

const (
	EventGameCreated EventType = iota + 1
	EventPlayerJoined
	EventGameStarted
	EventMoved
	EventCastled
	EventPromoted
	EventEnPassant
	EventCheck
	EventCheckmate
	EventStalemate
	EventDrawClaimable
	EventDrawOffered
	EventDrawDeclined
	EventDrawAccepted
	EventDrawOfferCancelled
	EventDrawClaimed
	EventUndoRequested
	EventUndoAccepted
	EventUndoDeclined
	EventUndoCancelled
	EventResigned
	EventTimeout
	EventExtensionUsed
	EventPlayerDisconnected
	EventPlayerReconnected
	EventGameEnded
	EventRematchLinked
	// EventPlayerReady: a seat sent ready (the yeoul rules); the second
	// one carries StartsAt.
	EventPlayerReady
)

var eventNames = [...]string{
	EventGameCreated:        "gameCreated",
	EventPlayerJoined:       "playerJoined",
	EventGameStarted:        "gameStarted",
	EventMoved:              "moved",
	EventCastled:            "castled",
	EventPromoted:           "promoted",
	EventEnPassant:          "enPassant",
	EventCheck:              "check",
	EventCheckmate:          "checkmate",
	EventStalemate:          "stalemate",
	EventDrawClaimable:      "drawClaimable",
	EventDrawOffered:        "drawOffered",
	EventDrawDeclined:       "drawDeclined",
	EventDrawAccepted:       "drawAccepted",
	EventDrawOfferCancelled: "drawOfferCancelled",
	EventDrawClaimed:        "drawClaimed",
	EventUndoRequested:      "undoRequested",
	EventUndoAccepted:       "undoAccepted",
	EventUndoDeclined:       "undoDeclined",
	EventUndoCancelled:      "undoCancelled",
	EventResigned:           "resigned",
	EventTimeout:            "timeout",
	EventExtensionUsed:      "extensionUsed",
	EventPlayerDisconnected: "playerDisconnected",
	EventPlayerReconnected:  "playerReconnected",
	EventGameEnded:          "gameEnded",
	EventRematchLinked:      "rematchLinked",
	EventPlayerReady:        "playerReady",
}

// String returns the API spelling ("moved", "gameEnded", ...).
func (t EventType) String() string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return "event(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText writes the API spelling.
func (t EventType) MarshalText() ([]byte, error) {
	if int(t) >= len(eventNames) || eventNames[t] == "" {
		return nil, fmt.Errorf("game: unknown event type %d", uint8(t))
	}
	return []byte(eventNames[t]), nil
}

// UnmarshalText reads the API spelling.
func (t *EventType) UnmarshalText(b []byte) error {
	for i, name := range eventNames {
		if name != "" && name == string(b) {
			*t = EventType(i)
			return nil
		}
	}
	return fmt.Errorf("game: unknown event type %q", b)
}

// Event is one thing that happened. Only the fields that matter for its
// type are set; colours are "white"/"black".
type Event struct {
	Type EventType `json:"type"`
	// Color is the side that acted (mover, requester, resigner, the side
	// whose time ran out, the side in check).
	Color string `json:"color,omitempty"`
	At    int64  `json:"at,omitempty"`
	// Ply is the number of moves played after the event.
	Ply int `json:"ply,omitempty"`
	// Move details (moved, castled, promoted, enPassant).
	UCI       string `json:"uci,omitempty"`
	SAN       string `json:"san,omitempty"`
	Captured  string `json:"captured,omitempty"`  // piece letter: p n b r q
	Promotion string `json:"promotion,omitempty"` // q r b n
	Castle    string `json:"castle,omitempty"`    // king | queen
	Check     bool   `json:"check,omitempty"`
	// Plies is how many moves an undo request takes back.
	Plies int `json:"plies,omitempty"`
	// Reason: the result reason (gameEnded), the claim (drawClaimable,
	// drawClaimed) or the cause of a timeout ("firstMove", "clock", "idle",
	// "disconnect", "ready", "aiUnavailable").
	Reason string `json:"reason,omitempty"`
	Winner string `json:"winner,omitempty"`
	// Auto marks a request declined because the asked side moved, or
	// withdrawn because the requester moved.
	Auto bool `json:"auto,omitempty"`
	// GameID names the rematch (rematchLinked).
	GameID string `json:"gameId,omitempty"`
	// RatingChange is a rated game's change of both ratings (gameEnded).
	RatingChange *RatingChange `json:"ratingChange,omitempty"`
	// StartsAt is when the game starts, on the playerReady that made both
	// seats ready (Unix ms).
	StartsAt int64 `json:"startsAt,omitempty"`
}
