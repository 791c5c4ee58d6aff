package game

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"chessapi/shared/chess"
)

// The header of the text stored form (formatText): everything of a state
// that the moves do not rebuild, one field per line as "key value", ended
// by an empty line. Reading it is a switch on the key per line, several
// times cheaper than decoding the same fields as JSON, which matters
// because every request reads one. A value runs to the end of its line;
// the strings that could hold a newline or a backslash (names, ids) are
// escaped. Pairs are "white black"; colours are 0 (white) and 1 (black).
//
// Required keys are checked (a missing one is a DecodeError), unknown keys
// refused: this program only ever reads what it wrote.

// Header keys.
const (
	hStateVersion = "sv"
	hGameID       = "id"
	hVersion      = "v"
	hCreatedAt    = "c"
	hPhase        = "p"
	hIndex        = "n"
	hStartFEN     = "sf"
	hRNG          = "rng"
	hRematchOf    = "rematch.of"
	hRematchNext  = "rematch.next"
	hResult       = "r"
	hRatingChange = "r.rating"
	hInvite       = "invite"
	hInviteCode   = "invite.codeHash"
	hInvitePlayer = "invite.playerId"
	hInviteToken  = "invite.tokenHash"

	hVariant    = "o.variant"
	hTimeCtl    = "o.timeControl"
	hDrawMode   = "o.drawMode"
	hColors     = "o.colorAssignment"
	hAutoQueen  = "o.autoQueen"
	hUndo       = "o.undo"
	hDrawOffer  = "o.drawOffer"
	hFirstMove  = "o.firstMoveSec"
	hIdleLimit  = "o.idleLimitSec"
	hHints      = "o.hints"
	hGraceSec   = "o.disconnectGraceSec"
	hRoom       = "o.room"
	hWaitingSec = "o.waitingExpirySec"
	hRemaining  = "clock.remainingMs"
	hTurnStart  = "clock.turnStartedAt"
	hStarted    = "clock.started"
	hExtensions = "clock.extensionsUsed"
	hUndoUsed   = "undo.usedBy"
	hUndoReq    = "undo.pending"
	hDrawBy     = "draw.pendingBy"
	hDrawLast   = "draw.lastOfferPly"
)

// Seat keys, after "w." or "b.".
const (
	hSeatPlayer       = "playerId"
	hSeatName         = "name"
	hSeatToken        = "tokenHash"
	hSeatAI           = "ai"
	hSeatConnected    = "connected"
	hSeatConnectedAt  = "connectedAt"
	hSeatDisconnected = "disconnectedAt"
	hSeatBound        = "bound"
	hSeatRating       = "rating"
)

var seatPrefix = [2]string{"w.", "b."}

// appendHeader appends the header of s (ended by the empty line).
func appendHeader(b []byte, s *State) []byte {
	line := func(key string) { b = append(append(b, key...), ' ') }
	end := func() { b = append(b, '\n') }
	num := func(key string, v int64) { line(key); b = strconv.AppendInt(b, v, 10); end() }
	str := func(key, v string) { line(key); b = appendEscaped(b, v); end() }
	pair := func(key string, w, k int64) {
		line(key)
		b = strconv.AppendInt(b, w, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, k, 10)
		end()
	}
	boolInt := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}

	num(hStateVersion, StateVersion)
	str(hGameID, s.GameID)
	num(hVersion, s.Version)
	num(hCreatedAt, s.CreatedAt)
	str(hPhase, string(s.Phase))
	o := &s.Options
	str(hVariant, string(o.Variant))
	str(hTimeCtl, o.TimeControl.String())
	str(hDrawMode, string(o.DrawMode))
	str(hColors, string(o.ColorAssignment))
	num(hAutoQueen, boolInt(o.AutoQueen))
	num(hUndo, int64(o.Undo))
	num(hDrawOffer, boolInt(o.DrawOffer))
	num(hFirstMove, int64(o.FirstMoveSec))
	num(hIdleLimit, int64(o.IdleLimitSec))
	str(hHints, string(o.Hints))
	num(hGraceSec, int64(o.DisconnectGraceSec))
	str(hRoom, string(o.Room))
	num(hWaitingSec, int64(o.WaitingExpirySec))
	for c, seat := range s.Seats {
		p := seatPrefix[c]
		if seat.PlayerID != "" {
			str(p+hSeatPlayer, seat.PlayerID)
		}
		if seat.Name != "" {
			str(p+hSeatName, seat.Name)
		}
		if seat.TokenHash != "" {
			str(p+hSeatToken, seat.TokenHash)
		}
		if seat.AI != "" {
			str(p+hSeatAI, seat.AI)
		}
		num(p+hSeatConnected, boolInt(seat.Connected))
		if seat.ConnectedAt != 0 {
			num(p+hSeatConnectedAt, seat.ConnectedAt)
		}
		if seat.DisconnectedAt != 0 {
			num(p+hSeatDisconnected, seat.DisconnectedAt)
		}
		if seat.Bound {
			num(p+hSeatBound, 1)
			num(p+hSeatRating, int64(seat.Rating))
		}
	}
	if s.Chess960Index != nil {
		num(hIndex, int64(*s.Chess960Index))
	}
	if derived, err := variantStartFEN(s.Options.Variant, s.Chess960Index); err != nil || derived != s.StartFEN {
		str(hStartFEN, s.StartFEN)
	}
	c := &s.Clock
	pair(hRemaining, c.RemainingMs[0], c.RemainingMs[1])
	num(hTurnStart, c.TurnStartedAt)
	pair(hStarted, boolInt(c.Started[0]), boolInt(c.Started[1]))
	pair(hExtensions, int64(c.ExtensionsUsed[0]), int64(c.ExtensionsUsed[1]))
	pair(hUndoUsed, int64(s.Undo.UsedBy[0]), int64(s.Undo.UsedBy[1]))
	if p := s.Undo.Pending; p != nil {
		pair(hUndoReq, int64(p.By), int64(p.Plies))
	}
	if p := s.Draw.PendingBy; p != nil {
		num(hDrawBy, int64(*p))
	}
	pair(hDrawLast, int64(s.Draw.LastOfferPly[0]), int64(s.Draw.LastOfferPly[1]))
	if r := s.Result; r != nil {
		winner := int64(-1)
		if r.Winner != nil {
			winner = int64(*r.Winner)
		}
		line(hResult)
		b = strconv.AppendInt(b, winner, 10)
		b = append(b, ' ')
		b = append(b, r.Reason...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, r.EndedAt, 10)
		end()
		if rc := r.RatingChange; rc != nil {
			pair(hRatingChange+".white", int64(rc.White.Before), int64(rc.White.After))
			pair(hRatingChange+".black", int64(rc.Black.Before), int64(rc.Black.After))
		}
	}
	line(hRNG)
	b = strconv.AppendUint(b, s.RNG.State, 10)
	end()
	if s.Rematch.Of != "" {
		str(hRematchOf, s.Rematch.Of)
	}
	if s.Rematch.Next != "" {
		str(hRematchNext, s.Rematch.Next)
	}
	if inv := s.Invite; inv.Mode != "" && inv.Mode != InviteOpen {
		str(hInvite, string(inv.Mode))
		if inv.CodeHash != "" {
			str(hInviteCode, inv.CodeHash)
		}
		if inv.PlayerID != "" {
			str(hInvitePlayer, inv.PlayerID)
		}
		if inv.TokenHash != "" {
			str(hInviteToken, inv.TokenHash)
		}
	}
	return append(b, '\n')
}

// appendEscaped appends v with backslashes and newlines escaped.
func appendEscaped(b []byte, v string) []byte {
	if strings.IndexByte(v, '\\') < 0 && strings.IndexByte(v, '\n') < 0 {
		return append(b, v...)
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, v[i])
		}
	}
	return b
}

func unescape(v []byte) (string, error) {
	if bytes.IndexByte(v, '\\') < 0 {
		return bytesString(v), nil
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			out = append(out, v[i])
			continue
		}
		if i++; i == len(v) {
			return "", fmt.Errorf("dangling escape")
		}
		switch v[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		default:
			return "", fmt.Errorf("unknown escape \\%c", v[i])
		}
	}
	return string(out), nil
}

// parseHeader reads a header from the front of b into s and returns what
// follows it.
func parseHeader(b []byte, s *State) ([]byte, error) {
	bad := func(key string, err error) error {
		return &DecodeError{Reason: "header field " + key, Err: err}
	}
	seen := map[string]bool{}
	for {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return nil, &DecodeError{Reason: "header not terminated"}
		}
		line := b[:nl]
		b = b[nl+1:]
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, &DecodeError{Reason: fmt.Sprintf("header line %q", line)}
		}
		key := bytesString(k)
		if seen[key] {
			return nil, &DecodeError{Reason: "header field " + key + " repeated"}
		}
		seen[key] = true
		if err := s.setHeaderField(key, v); err != nil {
			return nil, bad(key, err)
		}
	}
	for _, key := range []string{hStateVersion, hGameID, hVersion, hCreatedAt, hPhase, hVariant, hTimeCtl,
		hDrawMode, hColors, hAutoQueen, hUndo, hDrawOffer, hFirstMove, hIdleLimit, hHints, hGraceSec,
		hRemaining, hTurnStart, hStarted, hExtensions, hUndoUsed, hDrawLast, hRNG} {
		if !seen[key] {
			return nil, &DecodeError{Reason: "header field " + key + " missing"}
		}
	}
	return b, nil
}

func (s *State) setHeaderField(key string, v []byte) error {
	num := func() (int64, error) {
		n, rest, ok := parseDecimal(v)
		if !ok || len(rest) != 0 {
			return 0, fmt.Errorf("not an integer: %q", v)
		}
		return n, nil
	}
	small := func(dst *int) error {
		n, err := num()
		if err != nil || n < -1<<31 || n > 1<<31-1 {
			return fmt.Errorf("not a small integer: %q", v)
		}
		*dst = int(n)
		return nil
	}
	flag := func(dst *bool) error {
		n, err := num()
		if err != nil || n < 0 || n > 1 {
			return fmt.Errorf("not 0 or 1: %q", v)
		}
		*dst = n == 1
		return nil
	}
	pair := func() (int64, int64, error) {
		a, rest, ok := parseDecimal(v)
		if !ok || len(rest) < 2 || rest[0] != ' ' {
			return 0, 0, fmt.Errorf("not a pair: %q", v)
		}
		b, rest, ok := parseDecimal(rest[1:])
		if !ok || len(rest) != 0 {
			return 0, 0, fmt.Errorf("not a pair: %q", v)
		}
		return a, b, nil
	}
	pairInts := func(dst *PerColor[int]) error {
		a, b, err := pair()
		if err != nil || a < -1<<31 || a > 1<<31-1 || b < -1<<31 || b > 1<<31-1 {
			return fmt.Errorf("not a pair of small integers: %q", v)
		}
		dst[0], dst[1] = int(a), int(b)
		return nil
	}
	text := func(dst *string) error {
		str, err := unescape(v)
		*dst = str
		return err
	}
	color := func(n int64) (chess.Color, error) {
		if n != 0 && n != 1 {
			return 0, fmt.Errorf("not a colour: %d", n)
		}
		return chess.Color(n), nil
	}

	o := &s.Options
	if strings.HasPrefix(key, "w.") || strings.HasPrefix(key, "b.") {
		seat := &s.Seats[chess.White]
		if key[0] == 'b' {
			seat = &s.Seats[chess.Black]
		}
		switch key[2:] {
		case hSeatPlayer:
			return text(&seat.PlayerID)
		case hSeatName:
			return text(&seat.Name)
		case hSeatToken:
			return text(&seat.TokenHash)
		case hSeatAI:
			return text(&seat.AI)
		case hSeatConnected:
			return flag(&seat.Connected)
		case hSeatConnectedAt:
			n, err := num()
			seat.ConnectedAt = n
			return err
		case hSeatDisconnected:
			n, err := num()
			seat.DisconnectedAt = n
			return err
		case hSeatBound:
			return flag(&seat.Bound)
		case hSeatRating:
			return small(&seat.Rating)
		}
		return fmt.Errorf("unknown seat field")
	}
	switch key {
	case hStateVersion:
		return small(&s.StateVersion)
	case hGameID:
		return text(&s.GameID)
	case hVersion:
		n, err := num()
		s.Version = n
		return err
	case hCreatedAt:
		n, err := num()
		s.CreatedAt = n
		return err
	case hPhase:
		s.Phase = Phase(bytesString(v))
	case hIndex:
		var n int
		if err := small(&n); err != nil {
			return err
		}
		s.Chess960Index = &n
	case hStartFEN:
		return text(&s.StartFEN)
	case hVariant:
		o.Variant = Variant(bytesString(v))
	case hTimeCtl:
		tc, err := ParseTimeControl(bytesString(v))
		o.TimeControl = tc
		return err
	case hDrawMode:
		o.DrawMode = DrawMode(bytesString(v))
	case hColors:
		o.ColorAssignment = ColorAssignment(bytesString(v))
	case hAutoQueen:
		return flag(&o.AutoQueen)
	case hUndo:
		var n int
		err := small(&n)
		o.Undo = UndoAllowance(n)
		return err
	case hDrawOffer:
		return flag(&o.DrawOffer)
	case hFirstMove:
		return small(&o.FirstMoveSec)
	case hIdleLimit:
		return small(&o.IdleLimitSec)
	case hHints:
		o.Hints = Hints(bytesString(v))
	case hGraceSec:
		return small(&o.DisconnectGraceSec)
	case hRoom:
		o.Room = Room(bytesString(v))
	case hWaitingSec:
		return small(&o.WaitingExpirySec)
	case hRemaining:
		a, b, err := pair()
		s.Clock.RemainingMs = PerColor[int64]{a, b}
		return err
	case hTurnStart:
		n, err := num()
		s.Clock.TurnStartedAt = n
		return err
	case hStarted:
		a, b, err := pair()
		if err != nil || a < 0 || a > 1 || b < 0 || b > 1 {
			return fmt.Errorf("not a pair of flags: %q", v)
		}
		s.Clock.Started = PerColor[bool]{a == 1, b == 1}
	case hExtensions:
		return pairInts(&s.Clock.ExtensionsUsed)
	case hUndoUsed:
		return pairInts(&s.Undo.UsedBy)
	case hUndoReq:
		by, plies, err := pair()
		if err != nil {
			return err
		}
		c, err := color(by)
		if err != nil {
			return err
		}
		s.Undo.Pending = &UndoRequest{By: c, Plies: int(plies)}
	case hDrawBy:
		n, err := num()
		if err != nil {
			return err
		}
		c, err := color(n)
		if err != nil {
			return err
		}
		s.Draw.PendingBy = &c
	case hDrawLast:
		return pairInts(&s.Draw.LastOfferPly)
	case hResult:
		fields := strings.Fields(bytesString(v))
		if len(fields) != 3 {
			return fmt.Errorf("not winner, reason and time: %q", v)
		}
		w, err1 := strconv.Atoi(fields[0])
		at, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil || w < -1 || w > 1 {
			return fmt.Errorf("bad result %q", v)
		}
		r := &Result{Reason: Reason(fields[1]), EndedAt: at}
		if w >= 0 {
			c := chess.Color(w)
			r.Winner = &c
		}
		s.Result = r
	case hRNG:
		n, err := strconv.ParseUint(bytesString(v), 10, 64)
		s.RNG.State = n
		return err
	case hRatingChange + ".white", hRatingChange + ".black":
		if s.Result == nil {
			return fmt.Errorf("rating change without a result")
		}
		a, b, err := pair()
		if err != nil {
			return err
		}
		if s.Result.RatingChange == nil {
			s.Result.RatingChange = &RatingChange{}
		}
		m := &s.Result.RatingChange.White
		if strings.HasSuffix(key, ".black") {
			m = &s.Result.RatingChange.Black
		}
		*m = RatingMove{Before: int(a), After: int(b)}
	case hInvite:
		s.Invite.Mode = InviteMode(bytesString(v))
	case hInviteCode:
		return text(&s.Invite.CodeHash)
	case hInvitePlayer:
		return text(&s.Invite.PlayerID)
	case hInviteToken:
		return text(&s.Invite.TokenHash)
	case hRematchOf:
		return text(&s.Rematch.Of)
	case hRematchNext:
		return text(&s.Rematch.Next)
	default:
		return fmt.Errorf("unknown field")
	}
	return nil
}
