package game

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"chessapi/shared/chess"
)

// Stored form. Encode writes a format byte and then the header (header.go),
// the moves section and the logs (request ids, changes): the state without anything that replaying the moves from the start position
// rebuilds (FEN, position history, claimable, each move's FEN, the
// result's ranking). Moves, their SAN and their times are three compact
// columns of plain text. Decode replays the moves, which also validates
// them, and still reads the forms earlier versions wrote (a JSON header,
// storedState; DEFLATE-compressed).
//
// Decode also reads the plain JSON of a State (first byte '{'): stateVersion
// 2 as json.Marshal writes it, or a version 1 ChessState of the earlier
// TypeScript service, which it migrates (seeds/000 §5.4).

// Format bytes of the stored form.
const (
	formatPlain   byte = 1 // JSON header, newline, moves, logs (read only: older records)
	formatDeflate byte = 2 // the same, DEFLATE-compressed (read only: older records)
	formatText    byte = 3 // text header (header.go), empty line, moves, logs
)

type storedState struct {
	StateVersion  int            `json:"sv"`
	GameID        string         `json:"id"`
	Version       int64          `json:"v"`
	CreatedAt     int64          `json:"c"`
	Options       storedOptions  `json:"o"`
	Seats         PerColor[Seat] `json:"seats"`
	Chess960Index *int           `json:"n,omitempty"`
	StartFEN      string         `json:"sf,omitempty"` // only if not the variant's start
	// Moves, SANs and MoveDeltas are the moves in records written before
	// the moves section existed (see appendLogs); empty since.
	Moves      string        `json:"m,omitempty"`   // UCI, space-separated
	SANs       string        `json:"san,omitempty"` // SAN, space-separated
	MoveDeltas string        `json:"mt,omitempty"`  // move times: deltas from CreatedAt, then from the previous move
	Phase      Phase         `json:"p"`
	Clock      Clock         `json:"clock"`
	Undo       UndoState     `json:"undo"`
	Draw       DrawState     `json:"draw"`
	Result     *storedResult `json:"r,omitempty"`
	RNG        RNG           `json:"rng"`
	Rematch    Rematch       `json:"rematch"`
}

// storedOptions is Options without its strict JSON reader: stored options
// are checked with validate, which is much cheaper.
type storedOptions Options

type storedResult struct {
	Winner  *chess.Color `json:"w"`
	Reason  Reason       `json:"reason"`
	EndedAt int64        `json:"at"`
}

var flateReaders = sync.Pool{New: func() any { return flate.NewReader(nil) }}

// Encode returns the stored form of s. It is not compressed: stores that
// pay by the byte compress what they store (shared/store/dynamostore).
func Encode(s *State) ([]byte, error) { return encodePlain(s) }

// encodePlain returns the stored form (formatPlain).
func encodePlain(s *State) ([]byte, error) {
	size := 1024
	for _, c := range s.Changes {
		size += len(c.Events) + len(c.Delta) + 40
	}
	for _, r := range s.Requests {
		for _, e := range r {
			size += len(e.ID) + len(e.Hash) + len(e.Events) + 32
		}
	}
	for _, m := range s.Moves {
		size += len(m.UCI) + len(m.SAN) + 8 // separators and a time delta
	}
	for _, seat := range s.Seats {
		size += len(seat.PlayerID) + len(seat.Name) + len(seat.TokenHash)
	}
	plain := make([]byte, 0, size)
	plain = append(plain, formatText)
	plain = appendHeader(plain, s)
	plain = appendMoves(plain, s.Moves, s.CreatedAt)
	plain = appendLogs(plain, &s.Requests, s.Changes)
	return plain, nil
}

// The logs follow the JSON, one entry after another, without any JSON to
// scan; lengths make them safe for any bytes.
//
//	change entry:  "c<version> <at> <events len>:" events
//	its delta:     "d<delta len>:" delta (after its change entry; none for
//	               a change without one)
//	request entry: "h<seat 0|1> <version> <id len> <hash len> <events len>:" id hash events
//	request entry whose events are its version's change entry (no copy):
//	               "r<seat 0|1> <version> <id len> <hash len>:" id hash
//
// Entries written before request fingerprints existed have no tag and no
// hash: "<seat> <version> <id len> <events len>:" id events.
func appendLogs(b []byte, requests *PerColor[[]AppliedRequest], changes []Change) []byte {
	for _, ch := range changes {
		b = append(b, 'c')
		b = strconv.AppendInt(b, ch.Version, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, ch.At, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(ch.Events)), 10)
		b = append(b, ':')
		b = append(b, ch.Events...)
		if len(ch.Delta) > 0 {
			b = append(b, 'd')
			b = strconv.AppendInt(b, int64(len(ch.Delta)), 10)
			b = append(b, ':')
			b = append(b, ch.Delta...)
		}
	}
	for c, entries := range requests {
		for _, r := range entries {
			shared := false
			if len(changes) > 0 {
				if i := r.Version - changes[0].Version; i >= 0 && i < int64(len(changes)) {
					shared = bytes.Equal(changes[i].Events, r.Events)
				}
			}
			if shared {
				b = append(b, 'r')
			} else {
				b = append(b, 'h')
			}
			b = strconv.AppendInt(b, int64(c), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, r.Version, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(r.ID)), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(r.Hash)), 10)
			if !shared {
				b = append(b, ' ')
				b = strconv.AppendInt(b, int64(len(r.Events)), 10)
			}
			b = append(b, ':')
			b = append(b, r.ID...)
			b = append(b, r.Hash...)
			if !shared {
				b = append(b, r.Events...)
			}
		}
	}
	return b
}

// The moves section comes first after the JSON, as three columns kept as
// plain text so a decoder reads them without JSON unquoting:
//
//	"M<moves> <uci len> <san len> <times len>:" ucis sans times
//
// each column space-separated: the moves' UCI, their SAN, and their times
// as deltas (ms) from CreatedAt, then from the previous move.
func appendMoves(b []byte, moves []MoveRecord, createdAt int64) []byte {
	if len(moves) == 0 {
		return b
	}
	var ucis, sans int
	for _, m := range moves {
		ucis += len(m.UCI) + 1
		sans += len(m.SAN) + 1
	}
	times := make([]byte, 0, 5*len(moves))
	prev := createdAt
	for i, m := range moves {
		if i > 0 {
			times = append(times, ' ')
		}
		times = strconv.AppendInt(times, m.At-prev, 10)
		prev = m.At
	}
	b = append(b, 'M')
	b = strconv.AppendInt(b, int64(len(moves)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(ucis-1), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(sans-1), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(times)), 10)
	b = append(b, ':')
	for i, m := range moves {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, m.UCI...)
	}
	for i, m := range moves {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, m.SAN...)
	}
	return append(b, times...)
}

// moveColumns are the stored moves: n moves as space-separated UCI and SAN
// texts (each one string, so the moves' strings share its bytes) and their
// times.
type moveColumns struct {
	n          int
	ucis, sans string // sans empty: compute each SAN (JSON forms)
	ats        []int64
}

// parseMoves reads the moves section at the front of b, if there is one.
func parseMoves(b []byte, createdAt int64) (moveColumns, []byte, error) {
	if len(b) == 0 || b[0] != 'M' {
		return moveColumns{}, b, nil
	}
	n, rest, ok := logNumbers(b[1:], 4)
	if !ok || n[0] <= 0 || n[1] < 0 || n[2] < 0 || n[3] < 0 || n[1]+n[2]+n[3] > int64(len(rest)) || n[0] > int64(len(rest)) {
		return moveColumns{}, nil, &DecodeError{Reason: "moves section"}
	}
	// The buffer is the decoder's own and never written again: the
	// columns (and every move's UCI and SAN, substrings of them) share it.
	cols := moveColumns{n: int(n[0]), ucis: bytesString(rest[:n[1]]), sans: bytesString(rest[n[1] : n[1]+n[2]])}
	times := rest[n[1]+n[2] : n[1]+n[2]+n[3]]
	ats, err := parseTimes(times, cols.n, createdAt)
	if err != nil {
		return moveColumns{}, nil, err
	}
	cols.ats = ats
	return cols, rest[n[1]+n[2]+n[3]:], nil
}

// parseTimes reads n space-separated move-time deltas into absolute times.
func parseTimes(b []byte, n int, createdAt int64) ([]int64, error) {
	ats := make([]int64, n)
	prev := createdAt
	for i := range n {
		d, rest, ok := parseDecimal(b)
		last := i == n-1
		if !ok || (last && len(rest) != 0) || (!last && (len(rest) == 0 || rest[0] != ' ')) {
			return nil, &DecodeError{Reason: "move times"}
		}
		prev += d
		ats[i] = prev
		b = rest
		if !last {
			b = rest[1:]
		}
	}
	return ats, nil
}

// parseDecimal reads an optionally negative decimal int64 from the front of
// b (false for no digits or one that does not fit).
func parseDecimal(b []byte) (int64, []byte, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, nil, false
		}
		v = v*10 + d
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // -9223372036854775808
	}
	if i == 0 || v > limit {
		return 0, nil, false
	}
	if neg {
		return -int64(v), b[i:], true
	}
	return int64(v), b[i:], true
}

// nextToken splits the first space-separated token off s.
func nextToken(s string) (token, rest string) {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// logNumbers reads n space-separated decimal numbers ending with ':' from
// the front of b.
func logNumbers(b []byte, n int) ([5]int64, []byte, bool) {
	var out [5]int64
	for i := range n {
		end := 0
		neg := false
		if end < len(b) && b[end] == '-' {
			neg = true
			end++
		}
		digits := end
		for end < len(b) && end-digits < 19 && b[end] >= '0' && b[end] <= '9' {
			out[i] = out[i]*10 + int64(b[end]-'0')
			end++
		}
		sep := byte(' ')
		if i == n-1 {
			sep = ':'
		}
		if end == digits || end >= len(b) || b[end] != sep {
			return out, nil, false
		}
		if neg {
			out[i] = -out[i]
		}
		b = b[end+1:]
	}
	return out, b, true
}

// bytesString is b as a string without a copy. Only for the buffer Decode
// has taken over, which nobody writes again.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// parseLogs reads the logs section. The entries' bytes are slices of b,
// which Decode has taken over.
func parseLogs(b []byte, requests *PerColor[[]AppliedRequest], changes *[]Change) error {
	type link struct{ seat, index int }
	var links []link // 'r' entries, whose events come from the change log
	for len(b) > 0 {
		switch tag := b[0]; {
		case tag == 'c':
			n, rest, ok := logNumbers(b[1:], 3)
			if !ok || n[2] < 0 || n[2] > int64(len(rest)) {
				return &DecodeError{Reason: "change log entry"}
			}
			if k := len(*changes); k > 0 && (*changes)[k-1].Version+1 != n[0] {
				return &DecodeError{Reason: "change log versions not consecutive"}
			}
			*changes = append(*changes, Change{Version: n[0], At: n[1], Events: json.RawMessage(rest[:n[2]:n[2]])})
			b = rest[n[2]:]
		case tag == 'd':
			n, rest, ok := logNumbers(b[1:], 1)
			k := len(*changes)
			if !ok || n[0] <= 0 || n[0] > int64(len(rest)) || k == 0 || len((*changes)[k-1].Delta) > 0 {
				return &DecodeError{Reason: "change log delta"}
			}
			(*changes)[k-1].Delta = json.RawMessage(rest[:n[0]:n[0]])
			b = rest[n[0]:]
		case tag == 'h' || tag == 'r':
			count := 5
			if tag == 'r' {
				count = 4
			}
			n, rest, ok := logNumbers(b[1:], count)
			if !ok || n[0] < 0 || n[0] > 1 || n[2] < 0 || n[3] < 0 || n[4] < 0 || n[2]+n[3]+n[4] > int64(len(rest)) {
				return &DecodeError{Reason: "request log entry"}
			}
			id, hash := rest[:n[2]], rest[n[2]:n[2]+n[3]]
			end := n[2] + n[3] + n[4]
			seat := int(n[0])
			if tag == 'r' {
				links = append(links, link{seat, len(requests[seat])})
			}
			requests[seat] = append(requests[seat], AppliedRequest{ID: bytesString(id), Version: n[1], Hash: bytesString(hash), Events: json.RawMessage(rest[n[2]+n[3] : end : end])})
			b = rest[end:]
		case tag >= '0' && tag <= '9':
			n, rest, ok := logNumbers(b, 4)
			if !ok || n[0] > 1 || n[2] < 0 || n[3] < 0 || n[2]+n[3] > int64(len(rest)) {
				return &DecodeError{Reason: "request log entry"}
			}
			events := rest[n[2] : n[2]+n[3] : n[2]+n[3]]
			requests[n[0]] = append(requests[n[0]], AppliedRequest{ID: bytesString(rest[:n[2]]), Version: n[1], Events: json.RawMessage(events)})
			b = rest[n[2]+n[3]:]
		default:
			return &DecodeError{Reason: "log entry tag"}
		}
	}
	for _, l := range links {
		r := &requests[l.seat][l.index]
		i := -1
		if len(*changes) > 0 {
			i = int(r.Version - (*changes)[0].Version)
		}
		if i < 0 || i >= len(*changes) {
			return &DecodeError{Reason: "request log entry refers to a version the change log does not hold"}
		}
		r.Events = (*changes)[i].Events
	}
	return nil
}

// maxStateJSON bounds the inflated size of a stored state, so corrupt or
// hostile bytes cannot make Decode allocate without limit.
const maxStateJSON = 8 << 20

// Decode reads a stored state (Encode's form, or plain State JSON of version
// 1 or 2) and rebuilds everything derived by replaying the moves. The state
// keeps slices and strings of data (its moves and logs are read in place),
// so Decode takes data over: the caller must not modify it afterwards. Bytes that
// are not a valid state give a *DecodeError. A migrated version 1 state has
// no GameID or Version (version 1 records kept them outside the state): the
// caller sets both from its record.
func Decode(data []byte) (*State, error) {
	if len(data) == 0 {
		return nil, &DecodeError{Reason: "empty"}
	}
	switch data[0] {
	case formatText:
		return decodeText(data[1:])
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

// decodeText reads formatText: the header, the moves section, the logs.
func decodeText(data []byte) (*State, error) {
	s := &State{}
	rest, err := parseHeader(data, s)
	if err != nil {
		return nil, err
	}
	s.fillDefaults()
	if err := s.Options.validate(); err != nil {
		return nil, &DecodeError{Reason: "options", Err: err}
	}
	if s.StateVersion != StateVersion {
		return nil, &DecodeError{Reason: fmt.Sprintf("stored form has state version %d", s.StateVersion)}
	}
	if s.StartFEN == "" {
		fen, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
		if err != nil {
			return nil, &DecodeError{Reason: "start position", Err: err}
		}
		s.StartFEN = fen
	}
	cols, rest, err := parseMoves(rest, s.CreatedAt)
	if err != nil {
		return nil, err
	}
	if err := parseLogs(rest, &s.Requests, &s.Changes); err != nil {
		return nil, err
	}
	if err := s.rebuild(cols); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeStored reads formatPlain, the form with a JSON header that earlier
// versions wrote.
func decodeStored(data []byte) (*State, error) {
	js, log, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return nil, &DecodeError{Reason: "no request log section"}
	}
	var st storedState
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, &DecodeError{Reason: "json", Err: err}
	}
	opts := Options(st.Options)
	opts.fillDefaults()
	if err := opts.validate(); err != nil {
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
		Options:       opts,
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
	s.fillDefaults()
	if s.StartFEN == "" {
		fen, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
		if err != nil {
			return nil, &DecodeError{Reason: "start position", Err: err}
		}
		s.StartFEN = fen
	}
	cols, log, err := parseMoves(log, s.CreatedAt)
	if err != nil {
		return nil, err
	}
	if st.Moves != "" { // a record written before the moves section
		if cols.n > 0 {
			return nil, &DecodeError{Reason: "moves both in the JSON and in the moves section"}
		}
		n := strings.Count(st.Moves, " ") + 1
		if strings.Count(st.SANs, " ")+1 != n || strings.Count(st.MoveDeltas, " ")+1 != n {
			return nil, &DecodeError{Reason: "move, SAN and time counts differ"}
		}
		ats, err := parseTimes([]byte(st.MoveDeltas), n, s.CreatedAt)
		if err != nil {
			return nil, err
		}
		cols = moveColumns{n: n, ucis: st.Moves, sans: st.SANs, ats: ats}
	}
	if st.Result != nil {
		s.Result = &Result{Winner: st.Result.Winner, Reason: st.Result.Reason, EndedAt: st.Result.EndedAt}
	}
	if err := parseLogs(log, &s.Requests, &s.Changes); err != nil {
		return nil, err
	}
	if err := s.rebuild(cols); err != nil {
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

// maxFENLen is room for one FEN in a replay's buffer: a game's FENs are
// 40 to 75 bytes, most under 70 (the buffer grows in the rare case it
// must).
const maxFENLen = 72

// rebuild replays the moves from StartFEN, setting Moves, FEN, the live
// position and its hash history, and Claimable, completes Result from its
// winner and reason, and checks that the rest of the state is consistent,
// so that no later transition can fail on it. A stored game trusts its own
// SAN when it has it; the moves themselves are always checked for legality.
func (s *State) rebuild(cols moveColumns) error {
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		return &DecodeError{Reason: "start position", Err: err}
	}
	if pos.Turn() != chess.White {
		return &DecodeError{Reason: "start position has black to move"}
	}
	n := cols.n
	s.Moves = make([]MoveRecord, n, n+1)
	s.hashes = make([]uint64, 1, n+2)
	s.hashes[0] = pos.Hash()
	// Every FEN goes into one buffer; each move's FENAfter is a string
	// over its bytes, which are never written again (an append past the
	// capacity moves on to a new array and leaves the old one as it is):
	// one allocation for the whole game instead of one per move.
	fens := make([]byte, 0, n*maxFENLen)
	ucis, sans := cols.ucis, cols.sans
	for i := range n {
		var u, san string
		u, ucis = nextToken(ucis)
		m, err := pos.DecodeStoredUCI(u)
		if err != nil {
			return &DecodeError{Reason: fmt.Sprintf("move %d %q", i+1, u), Err: err}
		}
		if m.IsCastling() || (len(u) == 5 && m.Kind() != chess.KindPromotion) {
			u = pos.UCI(m) // the canonical form of an accepted spelling
		}
		rec := &s.Moves[i]
		rec.UCI, rec.Color, rec.At = u, pos.Turn(), cols.ats[i]
		switch {
		case m.IsEnPassant():
			rec.Captured = chess.Pawn
		case !m.IsCastling():
			rec.Captured = pos.PieceAt(m.To()).Type()
		}
		if cols.sans != "" {
			san, sans = nextToken(sans)
			rec.SAN = san
		} else {
			rec.SAN = pos.SAN(m)
		}
		pos.Play(m)
		start := len(fens)
		fens = pos.AppendFEN(fens)
		rec.FENAfter = unsafe.String(&fens[start], len(fens)-start)
		s.hashes = append(s.hashes, pos.Hash())
	}
	if ucis != "" || sans != "" {
		return &DecodeError{Reason: "more move text than moves"}
	}
	s.pos = *pos
	s.FEN = s.StartFEN
	if n := len(s.Moves); n > 0 {
		s.FEN = s.Moves[n-1].FENAfter
	}
	if err := s.checkConsistent(pos); err != nil {
		return &DecodeError{Reason: "inconsistent state", Err: err}
	}
	if s.Result != nil {
		rated := s.Result.RatingChange
		s.Result = s.makeResult(s.Result.Winner, s.Result.Reason, s.Result.EndedAt)
		s.Result.RatingChange = rated
	}
	s.updateClaimable()
	return nil
}

// fillDefaults gives a state stored before a field existed that field's
// default (the options of SPEC §12, an open invite).
func (s *State) fillDefaults() {
	s.Options.fillDefaults()
	if s.Invite.Mode == "" {
		s.Invite.Mode = InviteOpen
	}
}

func (s *State) checkConsistent(pos *chess.Position) error {
	if err := s.Options.validate(); err != nil {
		return err
	}
	switch m := s.Invite.Mode; {
	case m != InviteOpen && m != InvitePrivate && m != InviteReserved:
		return fmt.Errorf("unknown invite mode %q", m)
	case m == InvitePrivate && s.Invite.CodeHash == "":
		return errors.New("private invite without a code")
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
		if !reasons[s.Result.Reason] {
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
	s.fillDefaults()
	ucis := make([]string, len(s.Moves))
	cols := moveColumns{n: len(s.Moves), ats: make([]int64, len(s.Moves))}
	for i, m := range s.Moves {
		ucis[i], cols.ats[i] = m.UCI, m.At
	}
	cols.ucis = strings.Join(ucis, " ")
	if s.StartFEN == "" {
		fen, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
		if err != nil {
			return nil, &DecodeError{Reason: "start position", Err: err}
		}
		s.StartFEN = fen
	}
	stored := s.FEN
	if err := s.rebuild(cols); err != nil {
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
	opts, err := v1Options(v1.Options)
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

// v1Options reads the options object of a version 1 state (the same
// object a create request has).
func v1Options(raw json.RawMessage) (Options, error) {
	var o struct {
		Variant, TimeControl, DrawMode, ColorAssignment, Hints *string
		AutoQueen, DrawOffer                                   *bool
		Undo                                                   json.RawMessage
		FirstMoveSec, IdleLimitSec, DisconnectGraceSec         *int64
	}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &o); err != nil {
			return Options{}, err
		}
	}
	in := OptionsInput{
		Variant: o.Variant, TimeControl: o.TimeControl, DrawMode: o.DrawMode, ColorAssignment: o.ColorAssignment,
		Hints: o.Hints, AutoQueen: o.AutoQueen, DrawOffer: o.DrawOffer,
		FirstMoveSec: o.FirstMoveSec, IdleLimitSec: o.IdleLimitSec, DisconnectGraceSec: o.DisconnectGraceSec,
	}
	if len(o.Undo) > 0 && string(o.Undo) != "null" {
		var u UndoInput
		if json.Unmarshal(o.Undo, &u.Number) == nil {
			u.IsNumber = true
		} else if err := json.Unmarshal(o.Undo, &u.Text); err != nil {
			return Options{}, err
		}
		in.Undo = &u
	}
	return BuildOptions(in)
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
