package game

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"sync"

	"chessapi/shared/chess"
)

// Stored form. Encode writes a format byte and then the JSON of
// storedState followed by the request log: the state without anything that
// replaying the moves from the start position rebuilds (FEN, repetition
// table, claimable, each move's FEN, the result's ranking and summary).
// Moves, their SAN and their times are three compact fields (space-separated
// UCI and SAN, time deltas), so a 1,000-ply game is about 20 KB; bigger
// states are DEFLATE-compressed. Decode replays the moves, which also
// validates them.
//
// Decode also reads the plain JSON of a State (first byte '{'): stateVersion
// 2 as json.Marshal writes it, or a version 1 ChessState of the earlier
// TypeScript service, which it migrates (seeds/000 §5.4).

// Format bytes of the stored form.
const (
	formatPlain   byte = 1 // JSON header, newline, request log
	formatDeflate byte = 2 // the same, DEFLATE-compressed
)

// compressAbove is the plain size from which Encode compresses. Below it,
// compressing costs more time than the few kilobytes it saves are worth.
const compressAbove = 16 << 10

type storedState struct {
	StateVersion  int            `json:"sv"`
	GameID        string         `json:"id"`
	Version       int64          `json:"v"`
	CreatedAt     int64          `json:"c"`
	Options       storedOptions  `json:"o"`
	Seats         PerColor[Seat] `json:"seats"`
	Chess960Index *int           `json:"n,omitempty"`
	StartFEN      string         `json:"sf,omitempty"` // only if not the variant's start
	Moves         string         `json:"m"`            // UCI, space-separated
	SANs          string         `json:"san"`          // SAN, space-separated
	MoveDeltas    string         `json:"mt"`           // move times: deltas from CreatedAt, then from the previous move
	Phase         Phase          `json:"p"`
	Clock         Clock          `json:"clock"`
	Undo          UndoState      `json:"undo"`
	Draw          DrawState      `json:"draw"`
	Result        *storedResult  `json:"r,omitempty"`
	RNG           RNG            `json:"rng"`
	Rematch       Rematch        `json:"rematch"`
}

// storedOptions is Options without its strict JSON reader: stored options
// are checked with validate, which is much cheaper.
type storedOptions Options

type storedResult struct {
	Winner  *chess.Color `json:"w"`
	Reason  Reason       `json:"reason"`
	EndedAt int64        `json:"at"`
}

var (
	flateWriters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed)
		return w
	}}
	flateReaders = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// Encode returns the stored form of s.
func Encode(s *State) ([]byte, error) {
	st := storedState{
		StateVersion:  StateVersion,
		GameID:        s.GameID,
		Version:       s.Version,
		CreatedAt:     s.CreatedAt,
		Options:       storedOptions(s.Options),
		Seats:         s.Seats,
		Chess960Index: s.Chess960Index,
		Phase:         s.Phase,
		Clock:         s.Clock,
		Undo:          s.Undo,
		Draw:          s.Draw,
		RNG:           s.RNG,
		Rematch:       s.Rematch,
	}
	if derived, err := variantStartFEN(s.Options.Variant, s.Chess960Index); err != nil || derived != s.StartFEN {
		st.StartFEN = s.StartFEN
	}
	ucis := make([]byte, 0, len(s.Moves)*6)
	sans := make([]byte, 0, len(s.Moves)*5)
	deltas := make([]byte, 0, len(s.Moves)*5)
	prev := s.CreatedAt
	for i, m := range s.Moves {
		if i > 0 {
			ucis = append(ucis, ' ')
			sans = append(sans, ' ')
			deltas = append(deltas, ' ')
		}
		ucis = append(ucis, m.UCI...)
		sans = append(sans, m.SAN...)
		deltas = strconv.AppendInt(deltas, m.At-prev, 10)
		prev = m.At
	}
	st.Moves, st.SANs, st.MoveDeltas = string(ucis), string(sans), string(deltas)
	if r := s.Result; r != nil {
		st.Result = &storedResult{Winner: r.Winner, Reason: r.Reason, EndedAt: r.EndedAt}
	}
	js, err := json.Marshal(&st)
	if err != nil {
		return nil, fmt.Errorf("game: encode state: %w", err)
	}
	plain := make([]byte, 0, len(js)+1+64*len(s.Requests[0])+64*len(s.Requests[1]))
	plain = append(plain, formatPlain)
	plain = append(plain, js...)
	plain = appendRequestLog(append(plain, '\n'), &s.Requests)
	if len(plain) <= compressAbove {
		return plain, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(plain)/3 + 16)
	buf.WriteByte(formatDeflate)
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(plain[1:]); err != nil {
		return nil, fmt.Errorf("game: encode state: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("game: encode state: %w", err)
	}
	return buf.Bytes(), nil
}

// The request log follows the JSON, one entry after another, without any
// JSON to scan: "<seat 0|1> <version> <id length> <events length>:" then
// the id and the events JSON. Lengths make it safe for any id bytes.
func appendRequestLog(b []byte, log *PerColor[[]AppliedRequest]) []byte {
	for c, entries := range log {
		for _, r := range entries {
			b = strconv.AppendInt(b, int64(c), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, r.Version, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(r.ID)), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(r.Events)), 10)
			b = append(b, ':')
			b = append(b, r.ID...)
			b = append(b, r.Events...)
		}
	}
	return b
}

func parseRequestLog(b []byte, log *PerColor[[]AppliedRequest]) error {
	for len(b) > 0 {
		var n [4]int64
		for i := range n {
			end := 0
			for end < len(b) && end < 19 && b[end] >= '0' && b[end] <= '9' {
				n[i] = n[i]*10 + int64(b[end]-'0')
				end++
			}
			sep := byte(' ')
			if i == 3 {
				sep = ':'
			}
			if end == 0 || end >= len(b) || b[end] != sep {
				return &DecodeError{Reason: "request log entry header"}
			}
			b = b[end+1:]
		}
		if n[0] > 1 || n[2] > int64(len(b)) || n[3] > int64(len(b))-n[2] {
			return &DecodeError{Reason: "request log entry out of range"}
		}
		log[n[0]] = append(log[n[0]], AppliedRequest{
			ID:      string(b[:n[2]]),
			Version: n[1],
			Events:  json.RawMessage(bytes.Clone(b[n[2] : n[2]+n[3]])),
		})
		b = b[n[2]+n[3]:]
	}
	return nil
}

// maxStateJSON bounds the inflated size of a stored state, so corrupt or
// hostile bytes cannot make Decode allocate without limit.
const maxStateJSON = 8 << 20

// Decode reads a stored state (Encode's form, or plain State JSON of version
// 1 or 2) and rebuilds everything derived by replaying the moves. Bytes that
// are not a valid state give a *DecodeError. A migrated version 1 state has
// no GameID or Version (version 1 records kept them outside the state): the
// caller sets both from its record.
func Decode(data []byte) (*State, error) {
	if len(data) == 0 {
		return nil, &DecodeError{Reason: "empty"}
	}
	switch data[0] {
	case formatPlain:
		return decodeStored(data[1:])
	case formatDeflate:
		r := flateReaders.Get().(io.ReadCloser)
		defer flateReaders.Put(r)
		if err := r.(flate.Resetter).Reset(bytes.NewReader(data[1:]), nil); err != nil {
			return nil, &DecodeError{Reason: "inflate", Err: err}
		}
		js, err := io.ReadAll(io.LimitReader(r, maxStateJSON+1))
		if err != nil {
			return nil, &DecodeError{Reason: "inflate", Err: err}
		}
		if len(js) > maxStateJSON {
			return nil, &DecodeError{Reason: "state too large"}
		}
		return decodeStored(js)
	case '{', ' ', '\t', '\r', '\n':
		return decodeJSON(data)
	}
	return nil, &DecodeError{Reason: fmt.Sprintf("unknown format byte %#x", data[0])}
}

func decodeStored(data []byte) (*State, error) {
	js, log, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return nil, &DecodeError{Reason: "no request log section"}
	}
	var st storedState
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, &DecodeError{Reason: "json", Err: err}
	}
	if err := Options(st.Options).validate(); err != nil {
		return nil, &DecodeError{Reason: "options", Err: err}
	}
	if st.StateVersion != StateVersion {
		return nil, &DecodeError{Reason: fmt.Sprintf("stored form has state version %d", st.StateVersion)}
	}
	s := &State{
		StateVersion:  StateVersion,
		GameID:        st.GameID,
		Version:       st.Version,
		CreatedAt:     st.CreatedAt,
		Options:       Options(st.Options),
		Seats:         st.Seats,
		Chess960Index: st.Chess960Index,
		StartFEN:      st.StartFEN,
		Phase:         st.Phase,
		Clock:         st.Clock,
		Undo:          st.Undo,
		Draw:          st.Draw,
		RNG:           st.RNG,
		Rematch:       st.Rematch,
	}
	if s.StartFEN == "" {
		fen, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
		if err != nil {
			return nil, &DecodeError{Reason: "start position", Err: err}
		}
		s.StartFEN = fen
	}
	var ucis, sans, deltas []string
	if st.Moves != "" {
		ucis = strings.Split(st.Moves, " ")
		sans = strings.Split(st.SANs, " ")
		deltas = strings.Split(st.MoveDeltas, " ")
	}
	if len(ucis) != len(deltas) || len(ucis) != len(sans) {
		return nil, &DecodeError{Reason: fmt.Sprintf("%d moves, %d SANs, %d move times", len(ucis), len(sans), len(deltas))}
	}
	ats := make([]int64, len(ucis))
	prev := s.CreatedAt
	for i, d := range deltas {
		v, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return nil, &DecodeError{Reason: "move time", Err: err}
		}
		prev += v
		ats[i] = prev
	}
	if st.Result != nil {
		s.Result = &Result{Winner: st.Result.Winner, Reason: st.Result.Reason, EndedAt: st.Result.EndedAt}
	}
	if err := parseRequestLog(log, &s.Requests); err != nil {
		return nil, err
	}
	if err := s.rebuild(ucis, sans, ats); err != nil {
		return nil, err
	}
	return s, nil
}

// variantStartFEN returns the start position of a game of variant v.
func variantStartFEN(v Variant, index *int) (string, error) {
	if v != VariantChess960 {
		if index != nil {
			return "", errors.New("chess960Index set in a standard game")
		}
		return chess.StartFEN, nil
	}
	if index == nil {
		return "", errors.New("chess960 game without chess960Index")
	}
	return chess.Chess960StartFEN(*index)
}

// rebuild replays ucis (played at ats) from StartFEN, setting Moves, FEN,
// Repetition and Claimable, completes Result from its winner and reason,
// and checks that the rest of the state is consistent, so that no later
// transition can fail on it. sans, when not nil, are the moves' stored SAN
// (a stored game trusts its own notation; the moves themselves are always
// checked for legality).
func (s *State) rebuild(ucis, sans []string, ats []int64) error {
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		return &DecodeError{Reason: "start position", Err: err}
	}
	if pos.Turn() != chess.White {
		return &DecodeError{Reason: "start position has black to move"}
	}
	s.Moves = make([]MoveRecord, len(ucis))
	s.Repetition = make(map[string]int, len(ucis)+1)
	key := pos.RepetitionKey()
	s.Repetition[key] = 1
	var legal chess.MoveList
	var fen []byte
	for i, u := range ucis {
		pos.GenerateMoves(&legal, chess.GenAll)
		m, ok := findMove(pos, &legal, u)
		if !ok {
			if m, err = pos.ParseUCI(u); err != nil {
				return &DecodeError{Reason: fmt.Sprintf("move %d %q", i+1, u), Err: err}
			}
			u = pos.UCI(m)
		}
		rec := &s.Moves[i]
		rec.UCI, rec.Color, rec.At = u, pos.Turn(), ats[i]
		switch {
		case m.IsEnPassant():
			rec.Captured = chess.Pawn
		case !m.IsCastling():
			rec.Captured = pos.PieceAt(m.To()).Type()
		}
		if sans != nil {
			rec.SAN = sans[i]
		} else {
			rec.SAN = pos.SAN(m)
		}
		pos.Play(m)
		fen = appendFEN(fen[:0], pos)
		rec.FENAfter = string(fen)
		key = repetitionKey(rec.FENAfter)
		s.Repetition[key]++
	}
	s.FEN = string(appendFEN(fen[:0], pos))
	if err := s.checkConsistent(pos); err != nil {
		return &DecodeError{Reason: "inconsistent state", Err: err}
	}
	if s.Result != nil {
		s.Result = s.makeResult(s.Result.Winner, s.Result.Reason, s.Result.EndedAt)
	}
	s.updateClaimable(pos, key)
	return nil
}

func (s *State) checkConsistent(pos *chess.Position) error {
	if err := s.Options.validate(); err != nil {
		return err
	}
	n := len(s.Moves)
	switch s.Phase {
	case PhaseWaiting:
		if n > 0 || s.Seats[chess.White].taken() == s.Seats[chess.Black].taken() {
			return errors.New("waiting game must have one seat and no moves")
		}
	case PhasePlaying:
		if !s.Seats[chess.White].taken() || !s.Seats[chess.Black].taken() {
			return errors.New("playing game with a free seat")
		}
		if pos.Status() != chess.StatusPlaying {
			return fmt.Errorf("playing game in a %s position", pos.Status())
		}
	case PhaseFinished:
	default:
		return fmt.Errorf("unknown phase %q", s.Phase)
	}
	if (s.Phase == PhaseFinished) != (s.Result != nil) {
		return errors.New("result must be set exactly when finished")
	}
	if s.Result != nil {
		if _, ok := reasonKo[s.Result.Reason]; !ok {
			return fmt.Errorf("unknown result reason %q", s.Result.Reason)
		}
		if w := s.Result.Winner; w != nil && *w > chess.Black {
			return errors.New("invalid winner")
		}
	}
	for c := range s.Clock.RemainingMs {
		if s.Clock.RemainingMs[c] < 0 || s.Clock.ExtensionsUsed[c] < 0 || s.Clock.ExtensionsUsed[c] > PerMoveExtensions ||
			s.Undo.UsedBy[c] < 0 || s.Draw.LastOfferPly[c] < -1 {
			return errors.New("negative clock or counter")
		}
	}
	if p := s.Undo.Pending; p != nil && (p.Plies < 1 || p.Plies > 2 || p.Plies > n || p.By > chess.Black) {
		return errors.New("invalid pending undo")
	}
	if p := s.Draw.PendingBy; p != nil && *p > chess.Black {
		return errors.New("invalid pending draw offer")
	}
	if s.Phase != PhasePlaying && (s.Undo.Pending != nil || s.Draw.PendingBy != nil) {
		return errors.New("pending request outside play")
	}
	for c := range s.Requests {
		if len(s.Requests[c]) > RequestLogSize {
			return errors.New("request log too long")
		}
	}
	return nil
}

// decodeJSON reads plain State JSON: version 2 as json.Marshal writes it, or
// version 1 (migrated).
func decodeJSON(data []byte) (*State, error) {
	var head struct {
		StateVersion *int `json:"stateVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &DecodeError{Reason: "json", Err: err}
	}
	switch {
	case head.StateVersion == nil || *head.StateVersion == 1:
		return migrateV1(data)
	case *head.StateVersion == StateVersion:
	default:
		return nil, &DecodeError{Reason: fmt.Sprintf("unknown state version %d", *head.StateVersion)}
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, &DecodeError{Reason: "json", Err: err}
	}
	return s.rebuildFromJSON()
}

// rebuildFromJSON replays a State read from JSON and checks that the stored
// position agrees with the replay.
func (s *State) rebuildFromJSON() (*State, error) {
	ucis := make([]string, len(s.Moves))
	ats := make([]int64, len(s.Moves))
	for i, m := range s.Moves {
		ucis[i], ats[i] = m.UCI, m.At
	}
	if s.StartFEN == "" {
		fen, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
		if err != nil {
			return nil, &DecodeError{Reason: "start position", Err: err}
		}
		s.StartFEN = fen
	}
	stored := s.FEN
	if err := s.rebuild(ucis, nil, ats); err != nil {
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
	Options  json.RawMessage  `json:"options"`
	Players  PerColor[string] `json:"players"`
	StartFEN string           `json:"startFen"`
	FEN      string           `json:"fen"`
	Moves    []struct {
		UCI string `json:"uci"`
		At  int64  `json:"at"`
	} `json:"moves"`
	Phase Phase `json:"phase"`
	Clock Clock `json:"clock"`
	Undo  UndoState
	Draw  struct {
		PendingBy    *chess.Color   `json:"pendingBy"`
		LastOfferPly *PerColor[int] `json:"lastOfferPly"`
	} `json:"draw"`
	Result *struct {
		Winner *chess.Color `json:"winner"`
		Reason Reason       `json:"reason"`
	} `json:"result"`
	RNG       json.RawMessage `json:"rng"`
	CreatedAt int64           `json:"createdAt"`
}

// migrateV1 upgrades a version 1 state (seeds/000 §5.4): the variant is
// standard and chess960Index null. Version 1 had no seats, tokens or
// presence: players become seats without tokens, both connected. Its RNG
// state (used only at setup) seeds the version 2 RNG through a hash.
func migrateV1(data []byte) (*State, error) {
	var v1 v1State
	if err := json.Unmarshal(data, &v1); err != nil {
		return nil, &DecodeError{Reason: "v1 json", Err: err}
	}
	opts, err := ParseOptions(v1.Options)
	if err != nil {
		return nil, &DecodeError{Reason: "v1 options", Err: err}
	}
	if opts.Variant != VariantStandard {
		return nil, &DecodeError{Reason: "v1 state with a variant option"}
	}
	h := fnv.New64a()
	h.Write(v1.RNG)
	s := &State{
		StateVersion: StateVersion,
		CreatedAt:    v1.CreatedAt,
		Options:      opts,
		StartFEN:     v1.StartFEN,
		FEN:          v1.FEN,
		Phase:        v1.Phase,
		Clock:        v1.Clock,
		Undo:         v1.Undo,
		RNG:          RNG{State: h.Sum64()},
		Draw:         DrawState{PendingBy: v1.Draw.PendingBy, LastOfferPly: PerColor[int]{-1, -1}},
	}
	if v1.Draw.LastOfferPly != nil {
		s.Draw.LastOfferPly = *v1.Draw.LastOfferPly
	}
	for c, id := range v1.Players {
		s.Seats[c] = Seat{PlayerID: id, Connected: true}
	}
	if s.CreatedAt == 0 && len(v1.Moves) > 0 {
		s.CreatedAt = v1.Moves[0].At
	}
	if v1.Result != nil {
		s.Result = &Result{Winner: v1.Result.Winner, Reason: v1.Result.Reason, EndedAt: s.Clock.TurnStartedAt}
	}
	s.Moves = make([]MoveRecord, len(v1.Moves))
	for i, m := range v1.Moves {
		s.Moves[i] = MoveRecord{UCI: m.UCI, At: m.At}
	}
	return s.rebuildFromJSON()
}

// jsonMarshal is json.Marshal without HTML escaping (FENs and SAN stay
// readable).
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
