package game_test

import (
	"errors"
	"fmt"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
)

// The life of a game as the service drives it: create, join, reduce a
// seat's action, store the state (package storedgame) and read it back,
// and show each seat its view.
func Example() {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tc, hostWhite := "3+2", "hostWhite"
	opts, err := game.BuildOptions(game.OptionsInput{TimeControl: &tc, ColorAssignment: &hostWhite})
	if err != nil {
		panic(err)
	}
	s, _, err := game.New(game.NewGame{GameID: "g1", Options: opts, Host: game.Player{ID: "alice", Name: "Alice"}, Seed: 42}, start)
	if err != nil {
		panic(err)
	}
	s, _, err = game.Reduce(s, game.Join{Player: game.Player{ID: "bob", Name: "Bob"}}, start.Add(5*time.Second))
	if err != nil {
		panic(err)
	}

	action := game.Action{Type: game.ActionMove, Move: game.MoveInput{From: chess.E2, To: chess.E4}}
	s, events, err := game.Reduce(s, game.Act{By: chess.White, Action: action}, start.Add(9*time.Second))
	if err != nil {
		panic(err)
	}
	fmt.Println(events[0].Type, events[0].SAN, s.Version)

	stored := storedgame.Encode(s)
	s, err = storedgame.Decode(stored)
	if err != nil {
		panic(err)
	}
	black := chess.Black
	view, _ := game.ViewOf(s, &black, start.Add(10*time.Second))
	fmt.Println(view.Turn, len(view.LegalMoves), view.Moves[0].SAN)

	_, _, err = game.Reduce(s, game.Act{By: chess.White, Action: action}, start.Add(11*time.Second))
	var refusal *game.RuleError
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code)
	}
	// Output:
	// moved e4 3
	// black 20 e4
	// not_your_turn
}
