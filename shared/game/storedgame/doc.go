// Package storedgame is the stored form of a game: the bytes a store keeps
// for a game.State, and back.
//
//	b := storedgame.Encode(s)          // after every change, before the conditional write
//	s, err := storedgame.Decode(b)     // every request; *DecodeError: a corrupt record
//
// The form keeps only what replaying the moves cannot rebuild, so a record
// stays a few kilobytes and is checked on every read: a format byte (3),
// a text header of "key value" lines (header.go: one table of fields, the
// only place a stored field is declared; Encode and Decode both read it),
// the moves as three space-separated columns (UCI, SAN, time deltas) and
// the request and change logs, length-prefixed so that no JSON is scanned
// (their events stay raw JSON). Decode reads that and hands the state to
// game.Restore, which replays the moves from the start position, checking
// each for legality, and derives everything else (FENs, repetitions,
// claimable draws, the result's ranking). Encode does not compress: the
// stores that pay by the byte do (shared/store/dynamostore).
//
// # Older records
//
// Decode also reads every form an earlier version wrote (legacy.go, the
// compatibility reader): JSON headers with or without the moves section,
// DEFLATE- or Zstandard-compressed, the plain JSON of a State, and the
// version 1 ChessState of the TypeScript service, which it migrates
// (seeds/000 §5.4). testdata/records holds the output of each of those
// writers, made by the writers themselves.
//
// They stay readable, rather than being migrated once and dropped, because
// nothing can tell when the last of them is gone. Stores keep records of
// earlier rounds: a game is rewritten in the current form by its next
// change, but a finished game is never changed again (it stays until its
// TTL, 30 days after it ended on DynamoDB), and an embedded store's file
// can sit on a disk for months. A one-time migration would have to scan
// every store, racing live writes, with no way to prove it saw them all; a
// reader costs nothing on current records (Decode switches on the first
// byte) and is tested against every writer's output.
//
// Decode takes its input over: the events of the returned state's logs
// are slices of it, so the caller must not modify it afterwards. Nothing
// else of the state shares memory with the input: its strings are copies,
// all of a record's in one arena (and the FENs game.Restore derives in
// another), so nothing here needs package unsafe.
package storedgame
