package game

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"chessapi/shared/chess"
)

// Options are the room options of seeds/000 §2, plus the per-move timer of
// seeds/003 (SPEC §4). The zero value is not valid; start from
// DefaultOptions or BuildOptions.
type Options struct {
	Variant            Variant         `json:"variant"`
	TimeControl        TimeControl     `json:"timeControl"`
	DrawMode           DrawMode        `json:"drawMode"`
	ColorAssignment    ColorAssignment `json:"colorAssignment"`
	AutoQueen          bool            `json:"autoQueen"`
	Undo               UndoAllowance   `json:"undo"`
	DrawOffer          bool            `json:"drawOffer"`
	FirstMoveSec       int             `json:"firstMoveSec"`
	IdleLimitSec       int             `json:"idleLimitSec"`
	Hints              Hints           `json:"hints"`
	DisconnectGraceSec int             `json:"disconnectGraceSec"`
	// Room is the room of seeds/003 the game is played in; the rated
	// rooms gate who may sit by rating and move the players' ratings.
	Room Room `json:"room"`
	// WaitingExpirySec is how long a game may wait for its opponent,
	// counted from its creation, before it ends as expired (SPEC §12).
	WaitingExpirySec int `json:"waitingExpirySec"`
}

// Room is one of the rooms of seeds/003.
type Room string

const (
	// RoomFree: anyone, unrated (the default).
	RoomFree Room = "free"
	// RoomBeginner: ratings up to 1299, rated.
	RoomBeginner Room = "beginner"
	// RoomIntermediate: anyone, rated.
	RoomIntermediate Room = "intermediate"
	// RoomExpert: ratings from 1500, rated.
	RoomExpert Room = "expert"
)

// Rooms lists the rooms in the order of seeds/003.
var Rooms = []Room{RoomFree, RoomBeginner, RoomIntermediate, RoomExpert}

// Rated reports whether games in the room change ratings.
func (r Room) Rated() bool { return r == RoomBeginner || r == RoomIntermediate || r == RoomExpert }

// Admits reports whether a player of the given rating may sit in the room
// (seeds/003: beginner up to 1299, expert from 1500).
func (r Room) Admits(rating int) bool {
	switch r {
	case RoomBeginner:
		return rating <= 1299
	case RoomExpert:
		return rating >= 1500
	}
	return true
}

// The waiting expiry's bounds and default (SPEC §12).
const (
	MinWaitingExpirySec     = 60
	MaxWaitingExpirySec     = 86400
	DefaultWaitingExpirySec = 1800
)

// Variant is "standard" or "chess960".
type Variant string

const (
	VariantStandard Variant = "standard"
	VariantChess960 Variant = "chess960"
)

func (v Variant) chess() chess.Variant {
	if v == VariantChess960 {
		return chess.VariantChess960
	}
	return chess.VariantStandard
}

// DrawMode chooses how repetition and the 50-move rule end a game.
type DrawMode string

const (
	// DrawAuto: threefold repetition and 50 moves draw at once (chess.com).
	DrawAuto DrawMode = "auto"
	// DrawFIDE: threefold and 50 moves may be claimed; fivefold and 75 moves
	// draw automatically (FIDE 9.2, 9.3, 9.6).
	DrawFIDE DrawMode = "fide"
)

// ColorAssignment decides who plays White.
type ColorAssignment string

const (
	ColorsRandom    ColorAssignment = "random"
	ColorsHostWhite ColorAssignment = "hostWhite"
	ColorsHostBlack ColorAssignment = "hostBlack"
	// ColorsAlternate gives the host the colour opposite to the one they had
	// in the game this one is a rematch of (random for a first game).
	ColorsAlternate ColorAssignment = "alternate"
)

// Hints is "off" or "moves" (show the squares a piece can go to).
type Hints string

const (
	HintsOff   Hints = "off"
	HintsMoves Hints = "moves"
)

// UndoAllowance is how many take-backs each player may have accepted:
// UndoOff, 1, 3 or UndoUnlimited. JSON: "off", 1, 3 or "unlimited".
type UndoAllowance int

const (
	UndoOff       UndoAllowance = 0
	UndoUnlimited UndoAllowance = -1
)

// allows reports whether a player who has used n take-backs may have another.
func (u UndoAllowance) allows(n int) bool {
	return u == UndoUnlimited || n < int(u)
}

func (u UndoAllowance) MarshalJSON() ([]byte, error) {
	switch u {
	case UndoOff:
		return []byte(`"off"`), nil
	case UndoUnlimited:
		return []byte(`"unlimited"`), nil
	}
	return []byte(strconv.Itoa(int(u))), nil
}

// UnmarshalJSON reads "off", 1, 3 or "unlimited" (stored states).
func (u *UndoAllowance) UnmarshalJSON(b []byte) error {
	var in UndoInput
	if err := json.Unmarshal(b, &in.Number); err == nil {
		in.IsNumber = true
	} else if err := json.Unmarshal(b, &in.Text); err != nil {
		return FieldOneOf("options.undo", "off", "1", "3", "unlimited")
	}
	v, err := parseUndo(in)
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// TimeKind is the family of a time control.
type TimeKind uint8

const (
	// TimeFischer: a base time per player plus an increment per move.
	TimeFischer TimeKind = iota
	// TimePerMove: the same time for every move, refilled after each move;
	// running out spends one of PerMoveExtensions and refills (seeds/003).
	TimePerMove
	// TimeNone: no clock; a turn may last at most idleLimitSec.
	TimeNone
)

// PerMoveExtensions is how many times each seat may run out of its per-move
// time before losing on time (seeds/003).
const PerMoveExtensions = 3

// TimeControl is a parsed timeControl option. Its text form is "M+S"
// (Fischer, minutes + increment seconds), "perMove:N" or "none".
type TimeControl struct {
	Kind       TimeKind
	BaseSec    int // Fischer: starting time
	IncSec     int // Fischer: added after each move
	PerMoveSec int // per-move: time for every move
}

// Fischer returns the Fischer control of minutes + increment seconds.
func Fischer(minutes, incSec int) TimeControl {
	return TimeControl{Kind: TimeFischer, BaseSec: minutes * 60, IncSec: incSec}
}

func (tc TimeControl) String() string {
	switch tc.Kind {
	case TimeNone:
		return "none"
	case TimePerMove:
		return "perMove:" + strconv.Itoa(tc.PerMoveSec)
	}
	return strconv.Itoa(tc.BaseSec/60) + "+" + strconv.Itoa(tc.IncSec)
}

// MarshalText writes the text form ("10+5", "perMove:60", "none").
func (tc TimeControl) MarshalText() ([]byte, error) { return []byte(tc.String()), nil }

// UnmarshalText reads the text form with the limits of SPEC §4.
func (tc *TimeControl) UnmarshalText(b []byte) error {
	v, err := ParseTimeControl(string(b))
	if err != nil {
		return err
	}
	*tc = v
	return nil
}

// ParseTimeControl reads "M+S" (1 <= M <= 90 minutes, 0 <= S <= 60 seconds;
// the presets 3+2, 5+0, 5+3, 10+0, 10+5, 15+10 and 30+0 are such values),
// "none", or "perMove:30", "perMove:60", "perMove:120".
func ParseTimeControl(s string) (TimeControl, error) {
	bad := func(detail string) (TimeControl, error) {
		return TimeControl{}, FieldFormat("options.timeControl", "timeControl", fmt.Errorf("time control %q: %s", s, detail))
	}
	switch {
	case s == "none":
		return TimeControl{Kind: TimeNone}, nil
	case strings.HasPrefix(s, "perMove:"):
		switch n := s[len("perMove:"):]; n {
		case "30", "60", "120":
			sec, _ := strconv.Atoi(n)
			return TimeControl{Kind: TimePerMove, PerMoveSec: sec}, nil
		}
		return bad("per-move seconds must be 30, 60 or 120")
	}
	m, inc, ok := strings.Cut(s, "+")
	if !ok {
		return bad("not M+S")
	}
	minutes, err1 := strictAtoi(m)
	incSec, err2 := strictAtoi(inc)
	if err1 != nil || err2 != nil {
		return bad("M and S must be whole numbers")
	}
	if minutes < 1 || minutes > 90 || incSec < 0 || incSec > 60 {
		return bad("M must be 1-90 and S 0-60")
	}
	return Fischer(minutes, incSec), nil
}

// strictAtoi accepts only plain decimal digits (no sign, no spaces), at most
// three of them.
func strictAtoi(s string) (int, error) {
	if s == "" || len(s) > 3 {
		return 0, strconv.ErrSyntax
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.Atoi(s)
}

// DefaultOptions returns the defaults of seeds/000 §2.
func DefaultOptions() Options {
	return Options{
		Variant:            VariantStandard,
		TimeControl:        Fischer(10, 5),
		DrawMode:           DrawAuto,
		ColorAssignment:    ColorsRandom,
		AutoQueen:          false,
		Undo:               1,
		DrawOffer:          true,
		FirstMoveSec:       30,
		IdleLimitSec:       600,
		Hints:              HintsMoves,
		DisconnectGraceSec: 60,
		Room:               RoomFree,
		WaitingExpirySec:   DefaultWaitingExpirySec,
	}
}

// OptionsInput holds the options a create request gave, already decoded
// from JSON by the edge; a nil field takes its default (seeds/000 §2).
type OptionsInput struct {
	Variant, TimeControl, DrawMode, ColorAssignment, Hints, Room *string
	AutoQueen, DrawOffer                                         *bool
	// Undo is "off", 1, 3 or "unlimited" (a JSON string or integer; the
	// strings "1" and "3" are accepted too).
	Undo                                                             *UndoInput
	FirstMoveSec, IdleLimitSec, DisconnectGraceSec, WaitingExpirySec *int64
}

// UndoInput is the undo option as given: a string or an integer.
type UndoInput struct {
	Text     string
	Number   int64
	IsNumber bool
}

// BuildOptions returns the options with in's values over the defaults. A
// value outside its allowed set is an *InputError naming the field
// ("options.drawMode").
func BuildOptions(in OptionsInput) (Options, error) {
	o := DefaultOptions()
	var err error
	set := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	if in.Variant != nil {
		set(func() error {
			return setChoice("options.variant", *in.Variant, &o.Variant, VariantStandard, VariantChess960)
		})
	}
	if in.TimeControl != nil {
		set(func() (e error) { o.TimeControl, e = ParseTimeControl(*in.TimeControl); return e })
	}
	if in.DrawMode != nil {
		set(func() error { return setChoice("options.drawMode", *in.DrawMode, &o.DrawMode, DrawAuto, DrawFIDE) })
	}
	if in.ColorAssignment != nil {
		set(func() error {
			return setChoice("options.colorAssignment", *in.ColorAssignment, &o.ColorAssignment, ColorsRandom, ColorsHostWhite, ColorsHostBlack, ColorsAlternate)
		})
	}
	if in.Hints != nil {
		set(func() error { return setChoice("options.hints", *in.Hints, &o.Hints, HintsOff, HintsMoves) })
	}
	if in.AutoQueen != nil {
		o.AutoQueen = *in.AutoQueen
	}
	if in.DrawOffer != nil {
		o.DrawOffer = *in.DrawOffer
	}
	if in.Undo != nil {
		set(func() (e error) { o.Undo, e = parseUndo(*in.Undo); return e })
	}
	if in.FirstMoveSec != nil {
		set(func() error {
			return setIntChoice("options.firstMoveSec", *in.FirstMoveSec, &o.FirstMoveSec, 15, 30, 60)
		})
	}
	if in.IdleLimitSec != nil {
		set(func() error { return setIntChoice("options.idleLimitSec", *in.IdleLimitSec, &o.IdleLimitSec, 300, 600) })
	}
	if in.DisconnectGraceSec != nil {
		set(func() error {
			return setIntChoice("options.disconnectGraceSec", *in.DisconnectGraceSec, &o.DisconnectGraceSec, 30, 60, 120)
		})
	}
	if in.Room != nil {
		set(func() error {
			return setChoice("options.room", *in.Room, &o.Room, Rooms...)
		})
	}
	if in.WaitingExpirySec != nil {
		set(func() error {
			n := *in.WaitingExpirySec
			if n < MinWaitingExpirySec || n > MaxWaitingExpirySec {
				return FieldRange("options.waitingExpirySec", MinWaitingExpirySec, MaxWaitingExpirySec)
			}
			o.WaitingExpirySec = int(n)
			return nil
		})
	}
	if err != nil {
		return Options{}, err
	}
	return o, nil
}

func setChoice[T ~string](field, s string, dst *T, allowed ...T) error {
	for _, a := range allowed {
		if T(s) == a {
			*dst = a
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return FieldOneOf(field, names...)
}

func setIntChoice(field string, n int64, dst *int, allowed ...int) error {
	for _, a := range allowed {
		if n == int64(a) {
			*dst = a
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = strconv.Itoa(a)
	}
	return FieldOneOf(field, names...)
}

// parseUndo accepts "off", 1, 3, "unlimited" (and "1", "3" as strings).
func parseUndo(in UndoInput) (UndoAllowance, error) {
	switch {
	case in.IsNumber && (in.Number == 1 || in.Number == 3):
		return UndoAllowance(in.Number), nil
	case in.IsNumber:
	case in.Text == "off":
		return UndoOff, nil
	case in.Text == "unlimited":
		return UndoUnlimited, nil
	case in.Text == "1" || in.Text == "3":
		n, _ := strconv.Atoi(in.Text)
		return UndoAllowance(n), nil
	}
	return 0, FieldOneOf("options.undo", "off", "1", "3", "unlimited")
}

// firstMoveMs, idleMs and graceMs are the option times in milliseconds.
func (o *Options) firstMoveMs() int64 { return int64(o.FirstMoveSec) * 1000 }
func (o *Options) idleMs() int64      { return int64(o.IdleLimitSec) * 1000 }
func (o *Options) graceMs() int64     { return int64(o.DisconnectGraceSec) * 1000 }
func (o *Options) waitingMs() int64   { return int64(o.WaitingExpirySec) * 1000 }

// fillDefaults gives options stored before an option existed its default.
func (o *Options) fillDefaults() {
	if o.Room == "" {
		o.Room = RoomFree
	}
	if o.WaitingExpirySec == 0 {
		o.WaitingExpirySec = DefaultWaitingExpirySec
	}
}
