// Package game is the chess game of seeds/000 as a pure, deterministic state
// machine: options, seats, clocks, moves, draws, take-backs, offers,
// timeouts, results, views and the stored form.
//
// Every transition takes a *State and a time and returns a new *State and
// the events it produced, never modifying its input, never reading a clock
// and never drawing from a global random source (the game's RNG lives in the
// state and is used only at setup). So a game replays exactly from its seed
// and its actions.
//
//	New / Join                  create a game, take the free seat
//	DecodeAction + Apply        a player's action (move, castle, claimDraw,
//	                            requestUndo, respondUndo, offerDraw,
//	                            respondDraw, cancelOffer, resign)
//	Deadline + ApplyTimeout     the clock (first-move limit, Fischer,
//	                            per-move with extensions, idle limit,
//	                            disconnect grace)
//	SetPresence                 a seat connected or disconnected
//	ViewOf, PGN                 what a seat or a spectator sees
//	Encode / Decode             the stored form (Decode migrates version 1)
//
// The service drives one request like this: Decode the stored bytes, apply a
// due timeout (ApplyTimeout), look the request id up (State.AppliedRequest),
// Apply, Encode, write conditionally on the previous version, schedule
// Deadline, and answer with ViewOf and the events.
//
// Errors: *InputError is a malformed request (HTTP 400, with the dotted
// field), *RuleError a refused action (422, or 409 for CodeGameFull and
// CodeAlreadySeated), *DecodeError bytes that are not a game. Their Message
// fields are the Korean texts shown to users.
//
// Conventions: colours are "white"/"black"; times in State, Event and View
// are Unix milliseconds.
package game
