// Package game is the chess game of seeds/000 (with the per-move timer of
// seeds/003, and the rooms' game of seeds/003 as the yeoul rules) as a
// pure, deterministic state machine: options, seats, the ready step,
// clocks (correspondence included), moves, draws, take-backs, offers,
// timeouts, results, ratings, views and PGN.
//
// Every change goes through Reduce, which takes a *State, a Step and a time
// and returns a new *State and the events it produced, never modifying its
// input, never reading a clock and never drawing from a global random
// source (the game's RNG lives in the state and is used only at setup). So
// a game replays exactly from its seed and its steps.
//
//	BuildOptions, DefaultOptions    the options of seeds/000 §2 (ParseTimeControl,
//	DefaultOptionsFor               Fischer; Rooms and their rating gates; the
//	                                rules, RulesYeoul in rated rooms)
//	New                             create a game (a human to come, or an AI seat)
//	Reduce(s, step, now)            one change, a Step: Act (a seat's action: move,
//	                                castle, claimDraw, requestUndo, respondUndo,
//	                                offerDraw, respondDraw, cancelOffer, resign,
//	                                ready),
//	                                Join, Presence, Timeout (the clock), LinkRematch,
//	                                AIForfeit, and Rated (any of them, rating the
//	                                game if it ends it: Rate, EndsRatedGame); the
//	                                accounts' PlayerDeleted and SettleRating
//	                                (RateOne; accounts.go)
//	Deadline                        when the clock next needs a Timeout
//	TimeRunningOut                  when the turn's timeRunningOut reminders are due
//	ViewOf, PGN, LegalMoves         what a seat or a spectator sees (State.ClocksAfterMoves:
//	                                a Fischer game's clock after each move)
//	Restore                         complete a state read back from storage: replay
//	                                its moves and derive the rest
//	State.AppliedRequest,           a request id's stored outcome; the change log
//	State.ChangesAfter              since a version (catch-up)
//	ParseActionType, MoveRefusal,   for the edge that decodes requests: action
//	ValidUCISyntax                  names, a move's refusal, UCI text
//	Expected, RankKey               a rating's expected score, its rank
//
// The stored form itself (bytes and back, and every form earlier versions
// wrote) is package storedgame, beside this one; it calls Restore.
//
// The service drives one request like this: decode the stored bytes
// (storedgame.Decode), look the request id up (State.AppliedRequest),
// Reduce (which applies a due timeout first: clock, then legality, as
// seeds/000 §8.2 orders them), encode (storedgame.Encode), write
// conditionally on the previous version, schedule Deadline, and answer
// with ViewOf and the events.
//
// Errors: *InputError is a malformed request value (HTTP 400, with the
// dotted field and what is wrong with it: Problem), *RuleError an action
// the rules refuse (422, or 409 for the codes about seats), *RestoreError
// a stored state that is not a consistent game. None of them carries human
// text: the HTTP edge (shared/api) words every error in the reader's
// language.
//
// Conventions: colours are "white"/"black"; times in State, Event and View
// are Unix milliseconds.
package game
