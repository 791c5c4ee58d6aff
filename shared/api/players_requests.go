package api

import (
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The request bodies of the player and account routes (SPEC §12, §16.2),
// read by the one strict decoder (jsonin.go).

// decodeNewPlayer reads POST /v1/players: {name?} (an empty body too). A
// name left out is nil (the service gives a default); "" is a name, and
// refused.
func decodeNewPlayer(body []byte) (service.NewPlayerInput, error) {
	var in service.NewPlayerInput
	err := decodeBody(body, true, func(o *object) {
		in.Name = o.str("name")
	})
	return in, err
}

// decodeRename reads PATCH /v1/players/me: {name}.
func decodeRename(body []byte) (string, error) {
	var name string
	err := decodeBody(body, false, func(o *object) {
		n := o.str("name")
		o.require("name", n != nil)
		if n != nil {
			name = *n
		}
	})
	return name, err
}

// decodeLink reads POST /v1/players/link: {code}.
func decodeLink(body []byte) (string, error) {
	var code string
	err := decodeBody(body, false, func(o *object) {
		c := o.str("code")
		o.require("code", c != nil)
		if c != nil {
			if len(*c) > 64 {
				o.fail(game.FieldLength("code", 64))
			}
			code = *c
		}
	})
	return code, err
}

// decodeRecover reads POST /v1/players/recover: {playerId, recoveryCode}.
func decodeRecover(body []byte) (playerID, code string, err error) {
	err = decodeBody(body, false, func(o *object) {
		id, c := o.str("playerId"), o.str("recoveryCode")
		o.require("playerId", id != nil)
		o.require("recoveryCode", c != nil)
		if id != nil {
			if len(*id) > 64 {
				o.fail(game.FieldLength("playerId", 64))
			}
			playerID = *id
		}
		if c != nil {
			if len(*c) > 128 {
				o.fail(game.FieldLength("recoveryCode", 128))
			}
			code = *c
		}
	})
	return playerID, code, err
}

// decodeLabel reads PATCH /v1/players/me/sessions/current: {label}.
func decodeLabel(body []byte) (string, error) {
	var label string
	err := decodeBody(body, false, func(o *object) {
		l := o.str("label")
		o.require("label", l != nil)
		if l != nil {
			label = *l
		}
	})
	return label, err
}
