package game

import (
	"errors"
	"testing"
)

func TestMalformedSANIsInputError(t *testing.T) {
	s := newGame(t, DefaultOptions())
	_, _, err := Apply(s, white, Action{Type: ActionMove, Move: MoveInput{SAN: "Zz9"}}, at(1000))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "payload.san" {
		t.Errorf("Apply(san Zz9) = %v; want an *InputError for payload.san", err)
	}
	_, _, err = Apply(s, white, Action{Type: ActionMove, Move: MoveInput{SAN: "Nd2"}}, at(1000))
	if ruleCode(err) != CodeIllegalMove {
		t.Errorf("Apply(san Nd2) = %v; want illegal_move", err)
	}
}
