package storedgame

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// The header of the text form: every field of a state that replaying the
// moves does not rebuild, one line each as "key value", ended by an empty
// line. A value runs to the end of its line; text values are escaped (a
// backslash and a newline), so any string is stored. Pairs are "white
// black"; colours are 0 (white) and 1 (black); flags 0 or 1.
//
// header is the one list of those fields. Encode writes the lines in its
// order and Decode reads each line with the entry of its key (in any
// order; a key twice, an unknown key or a missing required key is a
// *DecodeError: this program only reads what it wrote). Storing one more
// field is one more entry:
//
//	text("o.rules", func(s *game.State) *game.Rules { return &s.Options.Rules }),
//	integer("clock.startsAt", func(s *game.State) *int64 { return &s.Clock.StartsAt }).omitZero(),
//
// (both are in the table below).
//
// A field added while records exist must not be required (the records
// written before it lack it; game.Restore gives it its default). A new
// value of a stored field needs no entry: a new phase ("ready") is a new
// text of "p", a new time control ("days:3") one of "o.timeControl".
var header = newFieldTable(slices.Concat(
	[]field{
		integer("sv", func(s *game.State) *int { return &s.StateVersion }).required(),
		text("id", func(s *game.State) *string { return &s.GameID }).required(),
		integer("v", func(s *game.State) *int64 { return &s.Version }).required(),
		integer("c", func(s *game.State) *int64 { return &s.CreatedAt }).required(),
		text("p", func(s *game.State) *game.Phase { return &s.Phase }).required(),

		text("o.variant", func(s *game.State) *game.Variant { return &s.Options.Variant }).required(),
		timeControl("o.timeControl", func(s *game.State) *game.TimeControl { return &s.Options.TimeControl }).required(),
		text("o.drawMode", func(s *game.State) *game.DrawMode { return &s.Options.DrawMode }).required(),
		text("o.colorAssignment", func(s *game.State) *game.ColorAssignment { return &s.Options.ColorAssignment }).required(),
		flag("o.autoQueen", func(s *game.State) *bool { return &s.Options.AutoQueen }).required(),
		integer("o.undo", func(s *game.State) *game.UndoAllowance { return &s.Options.Undo }).required(),
		flag("o.drawOffer", func(s *game.State) *bool { return &s.Options.DrawOffer }).required(),
		integer("o.firstMoveSec", func(s *game.State) *int { return &s.Options.FirstMoveSec }).required(),
		integer("o.idleLimitSec", func(s *game.State) *int { return &s.Options.IdleLimitSec }).required(),
		text("o.hints", func(s *game.State) *game.Hints { return &s.Options.Hints }).required(),
		integer("o.disconnectGraceSec", func(s *game.State) *int { return &s.Options.DisconnectGraceSec }).required(),
		text("o.room", func(s *game.State) *game.Room { return &s.Options.Room }),
		integer("o.waitingExpirySec", func(s *game.State) *int { return &s.Options.WaitingExpirySec }),
		// The standard rules are the default (records before the rules
		// existed are standard games; game.Restore fills it in).
		text("o.rules", func(s *game.State) *game.Rules { return &s.Options.Rules }).
			omitUnless(func(s *game.State) bool { return s.Options.Rules != "" && s.Options.Rules != game.RulesStandard }),
	},
	seatFields(chess.White),
	seatFields(chess.Black),
	[]field{
		nullable("n", integerValue[int](), func(s *game.State) **int { return &s.Chess960Index }),
		// The start position, when it is not the variant's (Restore derives that one).
		text("sf", func(s *game.State) *string { return &s.StartFEN }).
			omitUnless(func(s *game.State) bool { return s.StartFEN != "" && s.CustomStart() }),

		pair("clock.remainingMs", integerValue[int64](), func(s *game.State) *game.PerColor[int64] { return &s.Clock.RemainingMs }).required(),
		integer("clock.turnStartedAt", func(s *game.State) *int64 { return &s.Clock.TurnStartedAt }).required(),
		pair("clock.started", flagValue, func(s *game.State) *game.PerColor[bool] { return &s.Clock.Started }).required(),
		pair("clock.extensionsUsed", integerValue[int](), func(s *game.State) *game.PerColor[int] { return &s.Clock.ExtensionsUsed }).required(),
		integer("clock.startsAt", func(s *game.State) *int64 { return &s.Clock.StartsAt }).omitZero(),
		pair("ready", flagValue, func(s *game.State) *game.PerColor[bool] { return &s.Ready }).omitZero(),
		pair("undo.usedBy", integerValue[int](), func(s *game.State) *game.PerColor[int] { return &s.Undo.UsedBy }).required(),
		nullable("undo.pending", undoRequestValue, func(s *game.State) **game.UndoRequest { return &s.Undo.Pending }),
		nullable("draw.pendingBy", colorValue, func(s *game.State) **chess.Color { return &s.Draw.PendingBy }),
		pair("draw.lastOfferPly", integerValue[int](), func(s *game.State) *game.PerColor[int] { return &s.Draw.LastOfferPly }).required(),

		nullable("r", resultValue, func(s *game.State) **game.Result { return &s.Result }),
		ratingMove("r.rating.white", chess.White),
		ratingMove("r.rating.black", chess.Black),

		value("rng", unsignedValue, func(s *game.State) *uint64 { return &s.RNG.State }).required(),
		text("rematch.of", func(s *game.State) *string { return &s.Rematch.Of }).omitZero(),
		text("rematch.next", func(s *game.State) *string { return &s.Rematch.Next }).omitZero(),
		// An open invite is the default (game.Restore fills it in).
		text("invite", func(s *game.State) *game.InviteMode { return &s.Invite.Mode }).
			omitUnless(func(s *game.State) bool { return s.Invite.Mode != "" && s.Invite.Mode != game.InviteOpen }),
		text("invite.codeHash", func(s *game.State) *string { return &s.Invite.CodeHash }).omitZero(),
		text("invite.playerId", func(s *game.State) *string { return &s.Invite.PlayerID }).omitZero(),
		text("invite.tokenHash", func(s *game.State) *string { return &s.Invite.TokenHash }).omitZero(),
		// A Fischer game's take-backs that stand (most games have none).
		// Last: a line of numbers inside the header costs the stores'
		// fastest Zstandard level far more than its length (the realistic
		// 1,000-ply game: 427 bytes among the clock's lines, 1 here).
		list("clock.resets", resetsValue, func(s *game.State) *[]game.ClockReset { return &s.Clock.Resets }),
	},
))

// seatFields are the fields of one seat, keyed "w." or "b." and the name.
func seatFields(c chess.Color) []field {
	p := [2]string{"w.", "b."}[c]
	seat := func(s *game.State) *game.Seat { return &s.Seats[c] }
	return []field{
		text(p+"playerId", func(s *game.State) *string { return &seat(s).PlayerID }).omitZero(),
		text(p+"name", func(s *game.State) *string { return &seat(s).Name }).omitZero(),
		text(p+"tokenHash", func(s *game.State) *string { return &seat(s).TokenHash }).omitZero(),
		text(p+"ai", func(s *game.State) *string { return &seat(s).AI }).omitZero(),
		flag(p+"connected", func(s *game.State) *bool { return &seat(s).Connected }),
		integer(p+"connectedAt", func(s *game.State) *int64 { return &seat(s).ConnectedAt }).omitZero(),
		integer(p+"disconnectedAt", func(s *game.State) *int64 { return &seat(s).DisconnectedAt }).omitZero(),
		flag(p+"bound", func(s *game.State) *bool { return &seat(s).Bound }).omitZero(),
		integer(p+"rating", func(s *game.State) *int { return &seat(s).Rating }).omitZero(),
	}
}

// A field is one header line: its key, how its value is written from a
// state and read into one, and when it is left out.
type field struct {
	key string
	// mustHave: a record without this line is refused.
	mustHave bool
	// isZero reports that the field holds its zero value (nil for a
	// field without one); omit, when set, that the line is left out.
	isZero, omit func(s *game.State) bool
	// write appends the value; read sets it from the stored text (a
	// substring of the header, which is the decoded state's own copy).
	write func(b []byte, s *game.State) []byte
	read  func(s *game.State, v string) error
}

// required marks a field every record has.
func (f field) required() field { f.mustHave = true; return f }

// omitZero leaves the line out while the field holds its zero value.
func (f field) omitZero() field { f.omit = f.isZero; return f }

// omitUnless writes the line only when keep(s).
func (f field) omitUnless(keep func(s *game.State) bool) field {
	f.omit = func(s *game.State) bool { return !keep(s) }
	return f
}

// A valueKind writes and reads one type of value.
type valueKind[T any] struct {
	write func(b []byte, v T) []byte
	read  func(v string) (T, error)
}

// value is the field key of kind k at the place at returns.
func value[T comparable](key string, k valueKind[T], at func(s *game.State) *T) field {
	var zero T
	return field{
		key:    key,
		isZero: func(s *game.State) bool { return *at(s) == zero },
		write:  func(b []byte, s *game.State) []byte { return k.write(b, *at(s)) },
		read: func(s *game.State, v string) error {
			x, err := k.read(v)
			if err == nil {
				*at(s) = x
			}
			return err
		},
	}
}

// nullable is a field held by a pointer: the line is there when it is set.
func nullable[T any](key string, k valueKind[T], at func(s *game.State) **T) field {
	isNil := func(s *game.State) bool { return *at(s) == nil }
	return field{
		key:    key,
		isZero: isNil,
		omit:   isNil,
		write:  func(b []byte, s *game.State) []byte { return k.write(b, **at(s)) },
		read: func(s *game.State, v string) error {
			x, err := k.read(v)
			if err == nil {
				*at(s) = &x
			}
			return err
		},
	}
}

// The common kinds of field.

func integer[T ~int | ~int64](key string, at func(s *game.State) *T) field {
	return value(key, integerValue[T](), at)
}

func text[T ~string](key string, at func(s *game.State) *T) field {
	return value(key, textValue[T](), at)
}

func flag(key string, at func(s *game.State) *bool) field { return value(key, flagValue, at) }

func timeControl(key string, at func(s *game.State) *game.TimeControl) field {
	return value(key, timeControlValue, at)
}

// pair is a per-colour field: "white black".
func pair[T comparable](key string, k valueKind[T], at func(s *game.State) *game.PerColor[T]) field {
	return value(key, pairValue(k), at)
}

// list is a slice field of kind k, there when the slice is not empty (an
// empty slice reads back as nil).
func list[T any](key string, k valueKind[[]T], at func(s *game.State) *[]T) field {
	empty := func(s *game.State) bool { return len(*at(s)) == 0 }
	return field{
		key:    key,
		isZero: empty,
		omit:   empty,
		write:  func(b []byte, s *game.State) []byte { return k.write(b, *at(s)) },
		read: func(s *game.State, v string) error {
			x, err := k.read(v)
			if err == nil {
				*at(s) = x
			}
			return err
		},
	}
}

// pairValue is two values of kind k, "a b".
func pairValue[T any](k valueKind[T]) valueKind[game.PerColor[T]] {
	return valueKind[game.PerColor[T]]{
		write: func(b []byte, p game.PerColor[T]) []byte {
			b = k.write(b, p[0])
			return k.write(append(b, ' '), p[1])
		},
		read: func(v string) (game.PerColor[T], error) {
			a, b, ok := strings.Cut(v, " ")
			if !ok {
				return game.PerColor[T]{}, fmt.Errorf("not a pair: %q", v)
			}
			x, err := k.read(a)
			if err != nil {
				return game.PerColor[T]{}, err
			}
			y, err := k.read(b)
			return game.PerColor[T]{x, y}, err
		},
	}
}

// ratingMove is one side's rating change of a rated result, "before
// after". It completes the result's own line, which comes before it.
func ratingMove(key string, c chess.Color) field {
	k := pairValue(integerValue[int]())
	at := func(s *game.State) *game.RatingMove {
		if c == chess.White {
			return &s.Result.RatingChange.White
		}
		return &s.Result.RatingChange.Black
	}
	unrated := func(s *game.State) bool { return s.Result == nil || s.Result.RatingChange == nil }
	return field{
		key:    key,
		isZero: unrated,
		omit:   unrated,
		write: func(b []byte, s *game.State) []byte {
			m := at(s)
			return k.write(b, game.PerColor[int]{m.Before, m.After})
		},
		read: func(s *game.State, v string) error {
			if s.Result == nil {
				return errors.New("rating change without a result")
			}
			p, err := k.read(v)
			if err != nil {
				return err
			}
			if s.Result.RatingChange == nil {
				s.Result.RatingChange = &game.RatingChange{}
			}
			*at(s) = game.RatingMove{Before: p[0], After: p[1]}
			return nil
		},
	}
}

// integerValue is a decimal integer that must fit T.
func integerValue[T ~int | ~int64]() valueKind[T] {
	return valueKind[T]{
		write: func(b []byte, v T) []byte { return strconv.AppendInt(b, int64(v), 10) },
		read: func(v string) (T, error) {
			n, rest, ok := parseDecimal(v)
			if !ok || len(rest) != 0 || int64(T(n)) != n {
				return 0, fmt.Errorf("not an integer: %q", v)
			}
			return T(n), nil
		},
	}
}

var unsignedValue = valueKind[uint64]{
	write: func(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) },
	read: func(v string) (uint64, error) {
		var n uint64
		for _, c := range []byte(v) {
			d := uint64(c - '0')
			if c < '0' || c > '9' || n > (math.MaxUint64-d)/10 {
				return 0, fmt.Errorf("not an unsigned integer: %q", v)
			}
			n = n*10 + d
		}
		if len(v) == 0 {
			return 0, errors.New("not an unsigned integer: empty")
		}
		return n, nil
	},
}

var flagValue = valueKind[bool]{
	write: func(b []byte, v bool) []byte {
		if v {
			return append(b, '1')
		}
		return append(b, '0')
	},
	read: func(v string) (bool, error) {
		if len(v) != 1 || (v[0] != '0' && v[0] != '1') {
			return false, fmt.Errorf("not 0 or 1: %q", v)
		}
		return v[0] == '1', nil
	},
}

var colorValue = valueKind[chess.Color]{
	write: func(b []byte, c chess.Color) []byte { return append(b, '0'+byte(c)) },
	read: func(v string) (chess.Color, error) {
		if len(v) != 1 || (v[0] != '0' && v[0] != '1') {
			return 0, fmt.Errorf("not a colour: %q", v)
		}
		return chess.Color(v[0] - '0'), nil
	},
}

// textValue is escaped text: a backslash is "\\", a newline "\n".
func textValue[T ~string]() valueKind[T] {
	return valueKind[T]{
		write: func(b []byte, v T) []byte { return appendEscaped(b, string(v)) },
		read: func(v string) (T, error) {
			s, err := unescape(v)
			return T(s), err
		},
	}
}

var timeControlValue = valueKind[game.TimeControl]{
	write: func(b []byte, tc game.TimeControl) []byte { return append(b, tc.String()...) },
	read:  game.ParseTimeControl,
}

// resetsValue is a Fischer game's standing take-backs, ";"-separated, each
// "ply at white black" (the clock the take-back left).
var resetsValue = valueKind[[]game.ClockReset]{
	write: func(b []byte, rs []game.ClockReset) []byte {
		for i, r := range rs {
			if i > 0 {
				b = append(b, ';')
			}
			b = strconv.AppendInt(b, int64(r.Ply), 10)
			b = strconv.AppendInt(append(b, ' '), r.At, 10)
			b = strconv.AppendInt(append(b, ' '), r.RemainingMs[0], 10)
			b = strconv.AppendInt(append(b, ' '), r.RemainingMs[1], 10)
		}
		return b
	},
	read: func(v string) ([]game.ClockReset, error) {
		var out []game.ClockReset
		for _, entry := range strings.Split(v, ";") {
			f := strings.Split(entry, " ")
			if len(f) != 4 {
				return nil, fmt.Errorf("not a clock reset: %q", entry)
			}
			var n [4]int64
			for i, x := range f {
				d, rest, ok := parseDecimal(x)
				if !ok || rest != "" {
					return nil, fmt.Errorf("not a clock reset: %q", entry)
				}
				n[i] = d
			}
			if int64(int(n[0])) != n[0] {
				return nil, fmt.Errorf("clock reset ply out of range: %q", entry)
			}
			out = append(out, game.ClockReset{Ply: int(n[0]), At: n[1], RemainingMs: game.PerColor[int64]{n[2], n[3]}})
		}
		return out, nil
	},
}

// undoRequestValue is a pending take-back: "by plies".
var undoRequestValue = valueKind[game.UndoRequest]{
	write: func(b []byte, u game.UndoRequest) []byte {
		b = colorValue.write(b, u.By)
		return strconv.AppendInt(append(b, ' '), int64(u.Plies), 10)
	},
	read: func(v string) (game.UndoRequest, error) {
		by, plies, ok := strings.Cut(v, " ")
		if !ok {
			return game.UndoRequest{}, fmt.Errorf("not a colour and plies: %q", v)
		}
		c, err := colorValue.read(by)
		if err != nil {
			return game.UndoRequest{}, err
		}
		n, err := integerValue[int]().read(plies)
		return game.UndoRequest{By: c, Plies: n}, err
	},
}

// resultValue is a result as the moves cannot rebuild it: "winner reason
// endedAt", the winner -1 for none (the ranking and move count follow from
// the rest; the rating change has lines of its own).
var resultValue = valueKind[game.Result]{
	write: func(b []byte, r game.Result) []byte {
		winner := int64(-1)
		if r.Winner != nil {
			winner = int64(*r.Winner)
		}
		b = strconv.AppendInt(b, winner, 10)
		b = append(append(b, ' '), r.Reason...)
		return strconv.AppendInt(append(b, ' '), r.EndedAt, 10)
	},
	read: func(v string) (game.Result, error) {
		fields := strings.Fields(v)
		if len(fields) != 3 {
			return game.Result{}, fmt.Errorf("not winner, reason and time: %q", v)
		}
		w, rest, ok1 := parseDecimal(fields[0])
		at, rest2, ok2 := parseDecimal(fields[2])
		if !ok1 || !ok2 || len(rest) != 0 || len(rest2) != 0 || w < -1 || w > 1 {
			return game.Result{}, fmt.Errorf("bad result %q", v)
		}
		r := game.Result{Reason: game.Reason(fields[1]), EndedAt: at}
		if w >= 0 {
			c := chess.Color(w)
			r.Winner = &c
		}
		return r, nil
	},
}

// appendEscaped appends v with backslashes and newlines escaped.
func appendEscaped(b []byte, v string) []byte {
	if strings.IndexByte(v, '\\') < 0 && strings.IndexByte(v, '\n') < 0 {
		return append(b, v...) // nearly every value
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

// unescape reverses appendEscaped.
func unescape(v string) (string, error) {
	if strings.IndexByte(v, '\\') < 0 {
		return v, nil
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			out = append(out, v[i])
			continue
		}
		if i++; i == len(v) {
			return "", errors.New("dangling escape")
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

// fieldTable is the header's fields with what reading needs: the index of
// each key and the set of required ones.
type fieldTable struct {
	fields   []field
	index    map[string]int
	required fieldSet
}

// fieldSet is a set of field indexes.
type fieldSet [2]uint64

const maxFields = 128

func (s *fieldSet) add(i int)             { s[i/64] |= 1 << (i % 64) }
func (s *fieldSet) has(i int) bool        { return s[i/64]&(1<<(i%64)) != 0 }
func (s fieldSet) covers(t fieldSet) bool { return s[0]&t[0] == t[0] && s[1]&t[1] == t[1] }

func newFieldTable(fields []field) *fieldTable {
	if len(fields) > maxFields {
		panic("storedgame: more header fields than a fieldSet holds")
	}
	t := &fieldTable{fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		if _, dup := t.index[f.key]; dup {
			panic("storedgame: header key " + f.key + " declared twice")
		}
		t.index[f.key] = i
		if f.mustHave {
			t.required.add(i)
		}
	}
	return t
}

// appendHeader appends the header of s (ended by the empty line).
func (t *fieldTable) appendHeader(b []byte, s *game.State) []byte {
	for i := range t.fields {
		f := &t.fields[i]
		if f.omit != nil && f.omit(s) {
			continue
		}
		b = append(append(b, f.key...), ' ')
		b = append(f.write(b, s), '\n')
	}
	return append(b, '\n')
}

// parseHeader reads a header from the front of h into s and returns what
// follows it. The state's strings are substrings of h.
func (t *fieldTable) parseHeader(h string, s *game.State) (string, error) {
	var seen fieldSet
	next := 0 // the entry after the last line's: where a written header goes on
	for {
		nl := strings.IndexByte(h, '\n')
		if nl < 0 {
			return "", &DecodeError{Reason: "header not terminated"}
		}
		line := h[:nl]
		h = h[nl+1:]
		if len(line) == 0 {
			break
		}
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return "", &DecodeError{Reason: fmt.Sprintf("header line %q", line)}
		}
		i := t.find(k, next)
		if i < 0 {
			return "", &DecodeError{Reason: fmt.Sprintf("header field %q unknown", k)}
		}
		f := &t.fields[i]
		if seen.has(i) {
			return "", &DecodeError{Reason: "header field " + f.key + " repeated"}
		}
		seen.add(i)
		if err := f.read(s, v); err != nil {
			return "", &DecodeError{Reason: "header field " + f.key, Err: err}
		}
		next = i + 1
	}
	if !seen.covers(t.required) {
		for i, f := range t.fields {
			if f.mustHave && !seen.has(i) {
				return "", &DecodeError{Reason: "header field " + f.key + " missing"}
			}
		}
	}
	return h, nil
}

// find returns the index of the field with key k, looking first at the
// few entries from next on (Encode writes them in order, leaving only
// omitted ones out), or -1.
func (t *fieldTable) find(k string, next int) int {
	for i := next; i < len(t.fields) && i < next+8; i++ {
		if k == t.fields[i].key {
			return i
		}
	}
	if i, ok := t.index[k]; ok {
		return i
	}
	return -1
}
