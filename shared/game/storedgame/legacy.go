package storedgame

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// The compatibility reader: the forms earlier versions of this program
// and the TypeScript service before it wrote, read and never written (the
// package doc says why they stay). By writer, oldest first (the fixtures
// in testdata/records are those writers' own output):
//
//   - the TypeScript service: version 1 ChessState JSON (seeds/000 §5.4),
//     migrated (decodeStateJSON, migrateV1);
//   - the plain JSON of a State (stateVersion 2, as json.Marshal writes
//     it) (decodeStateJSON);
//   - commits c65d0b8 to fe7ea74: formatJSONHeader, a JSON header with the
//     moves in it and request entries without tag or fingerprint, and
//     from 16 KB formatDeflate, the same DEFLATE-compressed;
//   - commit bb98be9: formatJSONHeader with the moves section and tagged
//     logs, and from 1 KB the same Zstandard-compressed under format byte
//     3, which the text form took over at the next commit (8925936). A
//     Zstandard frame starts with its magic number and a text header with
//     "sv ", so Decode tells the two apart by the first four bytes.

// jsonHeader is the header of formatJSONHeader records.
type jsonHeader struct {
	StateVersion  int                      `json:"sv"`
	GameID        string                   `json:"id"`
	Version       int64                    `json:"v"`
	CreatedAt     int64                    `json:"c"`
	Options       plainOptions             `json:"o"`
	Seats         game.PerColor[game.Seat] `json:"seats"`
	Chess960Index *int                     `json:"n,omitempty"`
	StartFEN      string                   `json:"sf,omitempty"` // only if not the variant's start
	// Moves, SANs and MoveDeltas are the moves in records written before
	// the moves section existed; empty since.
	Moves      string            `json:"m,omitempty"`   // UCI, space-separated
	SANs       string            `json:"san,omitempty"` // SAN, space-separated
	MoveDeltas string            `json:"mt,omitempty"`  // move times: deltas from CreatedAt, then from the previous move
	Phase      game.Phase        `json:"p"`
	Clock      game.Clock        `json:"clock"`
	Undo       game.UndoState    `json:"undo"`
	Draw       game.DrawState    `json:"draw"`
	Result     *jsonHeaderResult `json:"r,omitempty"`
	RNG        game.RNG          `json:"rng"`
	Rematch    game.Rematch      `json:"rematch"`
}

// plainOptions is game.Options read field by field, whatever JSON reader
// Options itself may have (stored options are checked by game.Restore).
type plainOptions game.Options

type jsonHeaderResult struct {
	Winner  *chess.Color `json:"w"`
	Reason  game.Reason  `json:"reason"`
	EndedAt int64        `json:"at"`
}

// decodeJSONHeader reads formatJSONHeader: the JSON header, a newline, the
// moves section (unless the moves are in the header) and the logs.
func decodeJSONHeader(data []byte) (*game.State, error) {
	js, rest, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return nil, &DecodeError{Reason: "no request log section"}
	}
	var h jsonHeader
	if err := json.Unmarshal(js, &h); err != nil {
		return nil, &DecodeError{Reason: "json header", Err: err}
	}
	if h.StateVersion != game.StateVersion {
		return nil, &DecodeError{Reason: fmt.Sprintf("stored form has state version %d", h.StateVersion)}
	}
	s := &game.State{
		StateVersion:  game.StateVersion,
		GameID:        h.GameID,
		Version:       h.Version,
		CreatedAt:     h.CreatedAt,
		Options:       game.Options(h.Options),
		Seats:         h.Seats,
		Chess960Index: h.Chess960Index,
		StartFEN:      h.StartFEN,
		Phase:         h.Phase,
		Clock:         h.Clock,
		Undo:          h.Undo,
		Draw:          h.Draw,
		RNG:           h.RNG,
		Rematch:       h.Rematch,
	}
	if r := h.Result; r != nil {
		s.Result = &game.Result{Winner: r.Winner, Reason: r.Reason, EndedAt: r.EndedAt}
	}
	strs := newStrs(movesTextLength(rest) + requestTextLength)
	var err error
	if s.Moves, rest, err = parseMoves(rest, s.CreatedAt, strs); err != nil {
		return nil, err
	}
	if h.Moves != "" { // a record written before the moves section
		if len(s.Moves) > 0 {
			return nil, &DecodeError{Reason: "moves both in the JSON and in the moves section"}
		}
		n := strings.Count(h.Moves, " ") + 1
		if s.Moves, err = movesFromColumns(n, h.Moves, h.SANs, s.CreatedAt, []byte(h.MoveDeltas)); err != nil {
			return nil, err
		}
	}
	if err := parseLogs(rest, &s.Requests, &s.Changes, strs, true); err != nil {
		return nil, err
	}
	return restore(s)
}

// decodeDeflateJSONHeader reads formatDeflate.
func decodeDeflateJSONHeader(data []byte) (*game.State, error) {
	r := flate.NewReader(bytes.NewReader(data))
	defer r.Close()
	plain, err := io.ReadAll(io.LimitReader(r, maxStateBytes+1))
	if err != nil {
		return nil, &DecodeError{Reason: "inflate", Err: err}
	}
	if len(plain) > maxStateBytes {
		return nil, &DecodeError{Reason: "state too large"}
	}
	return decodeJSONHeader(plain)
}

// zstdMagic starts every Zstandard frame (RFC 8878 §3.1.1).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

func isZstdFrame(b []byte) bool { return bytes.HasPrefix(b, zstdMagic) }

// zstdDecoder reads bb98be9's compressed records, which are rare: it is
// made on first use, decodes one at a time, and never inflates a record
// past maxStateBytes.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxStateBytes))
})

// decodeZstdJSONHeader reads bb98be9's Zstandard-compressed
// formatJSONHeader.
func decodeZstdJSONHeader(data []byte) (*game.State, error) {
	d, err := zstdDecoder()
	if err != nil {
		return nil, &DecodeError{Reason: "zstd", Err: err}
	}
	plain, err := d.DecodeAll(data, nil)
	if err != nil {
		return nil, &DecodeError{Reason: "zstd", Err: err}
	}
	if len(plain) > maxStateBytes {
		return nil, &DecodeError{Reason: "state too large"}
	}
	return decodeJSONHeader(plain)
}

// decodeStateJSON reads plain State JSON: version 2 as json.Marshal writes
// it, or version 1 (migrated).
func decodeStateJSON(data []byte) (*game.State, error) {
	var head struct {
		StateVersion *int `json:"stateVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &DecodeError{Reason: "json", Err: err}
	}
	switch {
	case head.StateVersion == nil || *head.StateVersion == 1:
		return migrateV1(data)
	case *head.StateVersion == game.StateVersion:
	default:
		return nil, &DecodeError{Reason: fmt.Sprintf("unknown state version %d", *head.StateVersion)}
	}
	var s game.State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, &DecodeError{Reason: "json", Err: err}
	}
	return restoreJSON(&s)
}

// restoreJSON restores a state read from JSON, which has everything
// derived too: all of it is derived again (a stored SAN is not trusted
// here), and the stored position must agree with the replay.
func restoreJSON(s *game.State) (*game.State, error) {
	for i, m := range s.Moves {
		s.Moves[i] = game.MoveRecord{UCI: m.UCI, At: m.At}
	}
	stored := s.FEN
	if _, err := restore(s); err != nil {
		return nil, err
	}
	if stored != "" && stored != s.FEN {
		return nil, &DecodeError{Reason: fmt.Sprintf("stored fen %q differs from the replayed %q", stored, s.FEN)}
	}
	return s, nil
}

// v1State is the version 1 ChessState (seeds/000 §8.1 without the variant
// option and chess960Index). Fields that version 2 derives are ignored.
type v1State struct {
	Options  json.RawMessage       `json:"options"`
	Players  game.PerColor[string] `json:"players"`
	StartFEN string                `json:"startFen"`
	FEN      string                `json:"fen"`
	Moves    []struct {
		UCI string `json:"uci"`
		At  int64  `json:"at"`
	} `json:"moves"`
	Phase game.Phase `json:"phase"`
	Clock game.Clock `json:"clock"`
	Undo  game.UndoState
	Draw  struct {
		PendingBy    *chess.Color        `json:"pendingBy"`
		LastOfferPly *game.PerColor[int] `json:"lastOfferPly"`
	} `json:"draw"`
	Result *struct {
		Winner *chess.Color `json:"winner"`
		Reason game.Reason  `json:"reason"`
	} `json:"result"`
	RNG       json.RawMessage `json:"rng"`
	CreatedAt int64           `json:"createdAt"`
}

// migrateV1 upgrades a version 1 state (seeds/000 §5.4): the variant is
// standard and chess960Index null. Version 1 had no seats, tokens or
// presence: players become seats without tokens, both connected. Its RNG
// state (used only at setup) seeds the version 2 RNG through a hash.
func migrateV1(data []byte) (*game.State, error) {
	var v1 v1State
	if err := json.Unmarshal(data, &v1); err != nil {
		return nil, &DecodeError{Reason: "v1 json", Err: err}
	}
	opts, err := v1Options(v1.Options)
	if err != nil {
		return nil, &DecodeError{Reason: "v1 options", Err: err}
	}
	if opts.Variant != game.VariantStandard {
		return nil, &DecodeError{Reason: "v1 state with a variant option"}
	}
	h := fnv.New64a()
	h.Write(v1.RNG)
	s := &game.State{
		StateVersion: game.StateVersion,
		CreatedAt:    v1.CreatedAt,
		Options:      opts,
		StartFEN:     v1.StartFEN,
		FEN:          v1.FEN,
		Phase:        v1.Phase,
		Clock:        v1.Clock,
		Undo:         v1.Undo,
		RNG:          game.RNG{State: h.Sum64()},
		Draw:         game.DrawState{PendingBy: v1.Draw.PendingBy, LastOfferPly: game.PerColor[int]{-1, -1}},
	}
	if v1.Draw.LastOfferPly != nil {
		s.Draw.LastOfferPly = *v1.Draw.LastOfferPly
	}
	for c, id := range v1.Players {
		s.Seats[c] = game.Seat{PlayerID: id, Connected: true}
	}
	if s.CreatedAt == 0 && len(v1.Moves) > 0 {
		s.CreatedAt = v1.Moves[0].At
	}
	if v1.Result != nil {
		s.Result = &game.Result{Winner: v1.Result.Winner, Reason: v1.Result.Reason, EndedAt: s.Clock.TurnStartedAt}
	}
	s.Moves = make([]game.MoveRecord, len(v1.Moves), len(v1.Moves)+1)
	for i, m := range v1.Moves {
		s.Moves[i] = game.MoveRecord{UCI: m.UCI, At: m.At}
	}
	return restoreJSON(s)
}

// v1Options reads the options object of a version 1 state (the same
// object a create request has).
func v1Options(raw json.RawMessage) (game.Options, error) {
	var o struct {
		Variant, TimeControl, DrawMode, ColorAssignment, Hints *string
		AutoQueen, DrawOffer                                   *bool
		Undo                                                   json.RawMessage
		FirstMoveSec, IdleLimitSec, DisconnectGraceSec         *int64
	}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &o); err != nil {
			return game.Options{}, err
		}
	}
	in := game.OptionsInput{
		Variant: o.Variant, TimeControl: o.TimeControl, DrawMode: o.DrawMode, ColorAssignment: o.ColorAssignment,
		Hints: o.Hints, AutoQueen: o.AutoQueen, DrawOffer: o.DrawOffer,
		FirstMoveSec: o.FirstMoveSec, IdleLimitSec: o.IdleLimitSec, DisconnectGraceSec: o.DisconnectGraceSec,
	}
	if len(o.Undo) > 0 && string(o.Undo) != "null" {
		var u game.UndoInput
		if json.Unmarshal(o.Undo, &u.Number) == nil {
			u.IsNumber = true
		} else if err := json.Unmarshal(o.Undo, &u.Text); err != nil {
			return game.Options{}, err
		}
		in.Undo = &u
	}
	return game.BuildOptions(in)
}
