package game

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"chessapi/shared/chess"
)

// Options are the room options of seeds/000 §2, plus the per-move timer of
// seeds/003 (SPEC §4), correspondence time (SPEC §16.3) and the rules a
// game follows (SPEC §16.5). The zero value is not valid; start from
// DefaultOptions, DefaultOptionsFor or BuildOptions.
type Options struct {
	// Rules is the game the options describe: the design's (seeds/000) or
	// the rooms' (seeds/003), which fixes most of the others.
	Rules              Rules           `json:"rules"`
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

// Rules is the game a set of options follows (SPEC §16.5).
type Rules string

const (
	// RulesStandard: the game of seeds/000, every option as chosen.
	RulesStandard Rules = "standard"
	// RulesYeoul: the game of seeds/003 (the product it calls 여울), which
	// every rated room plays: a per-move timer of 30, 60 or 120 s with 3
	// extensions, no draw offers, no take-backs, automatic draws, an
	// unchosen promotion becomes a queen, a 90 s reconnection that ends as
	// a resignation, only K v K, K+N v K and K+B v K as insufficient
	// material, no flag-fall draw, and a ready step before the first move.
	RulesYeoul Rules = "yeoul"
)

// The fixed values of the yeoul rules (seeds/003).
const (
	// YeoulGraceSec is the reconnection time: "90초 안에 다시 들어오면 그
	// 자리에서 이어 둡니다. 돌아오지 못하면 기권으로 처리됩니다."
	YeoulGraceSec = 90
	// StartDelayMs is how long after the second ready the game starts:
	// "두 사람이 레디하면 3초 뒤 \"대국 시작\"이 뜨고 백부터 둡니다."
	StartDelayMs = 3000
	// ReadyLimitSec bounds the ready step (seeds/003 gives none): a game
	// whose seats are not both ready this long after it entered the step
	// is called off, unrated, as a first move not made in time is. It is
	// the longest first-move limit of seeds/000 §2.
	ReadyLimitSec = 60
)

// yeoulTimeControls are the per-move times seeds/003 offers: "한 수 시간은
// 30초, 60초(기본), 120초 가운데 고릅니다."
var yeoulTimeControls = []string{"perMove:30", "perMove:60", "perMove:120"}

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
	// TimeDays: correspondence (SPEC §16.3): every move, the first ones
	// included, has the same number of days, refilled after each move;
	// no extensions, no idle limit, no disconnect grace.
	TimeDays
)

// CorrespondenceDays are the day counts of a correspondence time control.
var CorrespondenceDays = []int{1, 2, 3, 5, 7, 14}

// dayMs is one day in milliseconds.
const dayMs = 24 * 60 * 60 * 1000

// PerMoveExtensions is how many times each seat may run out of its per-move
// time before losing on time (seeds/003).
const PerMoveExtensions = 3

// TimeControl is a parsed timeControl option. Its text form is "M+S"
// (Fischer, minutes + increment seconds), "perMove:N", "days:N" or "none".
type TimeControl struct {
	Kind       TimeKind
	BaseSec    int // Fischer: starting time
	IncSec     int // Fischer: added after each move
	PerMoveSec int // per-move: time for every move
	Days       int // correspondence: days for every move
}

// Correspondence reports whether the control counts in days.
func (tc TimeControl) Correspondence() bool { return tc.Kind == TimeDays }

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
	case TimeDays:
		return "days:" + strconv.Itoa(tc.Days)
	}
	return strconv.Itoa(tc.BaseSec/60) + "+" + strconv.Itoa(tc.IncSec)
}

// MarshalText writes the text form ("10+5", "perMove:60", "days:3", "none").
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
// "none", "perMove:30", "perMove:60", "perMove:120", or "days:N" with N one
// of CorrespondenceDays.
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
	case strings.HasPrefix(s, "days:"):
		if n, err := strictAtoi(s[len("days:"):]); err == nil && slices.Contains(CorrespondenceDays, n) && s == "days:"+strconv.Itoa(n) {
			return TimeControl{Kind: TimeDays, Days: n}, nil
		}
		return bad("days must be 1, 2, 3, 5, 7 or 14")
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
		Rules:              RulesStandard,
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

// DefaultOptionsFor returns the defaults of a game in room: the rooms'
// game (seeds/003) in a rated room, seeds/000's elsewhere.
func DefaultOptionsFor(room Room) Options {
	o := DefaultOptions()
	o.Room = room
	if room.Rated() {
		o.yeoul()
	}
	return o
}

// yeoul sets the options seeds/003 fixes, each to its one value (the
// per-move time to its default, 60 s).
func (o *Options) yeoul() {
	o.Rules = RulesYeoul
	o.TimeControl = TimeControl{Kind: TimePerMove, PerMoveSec: 60}
	o.DrawOffer = false
	o.Undo = UndoOff
	o.DrawMode = DrawAuto
	o.DisconnectGraceSec = YeoulGraceSec
}

// OptionsInput holds the options a create request gave, already decoded
// from JSON by the edge; a nil field takes its default (seeds/000 §2, or
// seeds/003's for the yeoul rules: a rated room's, or asked for with
// Rules).
type OptionsInput struct {
	Rules                                                        *string
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
// ("options.drawMode"); so is, under the yeoul rules (a rated room's, or
// Rules "yeoul"), a value those rules do not allow (SPEC §16.5): a time
// control other than perMove:30|60|120, drawOffer true, undo other than
// "off", drawMode "fide", a disconnectGraceSec other than its 90. The yeoul
// rules fix those options (a value equal to the fixed one is accepted, so
// the options a view shows read back as they are); the others keep their
// meaning.
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
			// 90 s is the yeoul rules' own (applyRules refuses it under
			// the standard rules).
			return setIntChoice("options.disconnectGraceSec", *in.DisconnectGraceSec, &o.DisconnectGraceSec, 30, 60, 120, YeoulGraceSec)
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
	if err == nil {
		err = o.applyRules(in)
	}
	if err != nil {
		return Options{}, err
	}
	return o, nil
}

// applyRules settles the rules of options built from in: the ones asked
// for, else the room's (yeoul in a rated room, standard elsewhere), and
// under yeoul the fixed values, refusing a given value they contradict.
// Correspondence games are for the free room only (SPEC §16.3).
func (o *Options) applyRules(in OptionsInput) error {
	rules := RulesStandard
	if o.Room.Rated() {
		rules = RulesYeoul
	}
	if in.Rules != nil {
		if err := setChoice("options.rules", *in.Rules, &rules, RulesStandard, RulesYeoul); err != nil {
			return err
		}
		if o.Room.Rated() && rules != RulesYeoul {
			return FieldNotAllowed("options.rules", "ratedRoomRules")
		}
	}
	if rules == RulesStandard {
		if o.DisconnectGraceSec == YeoulGraceSec {
			return FieldOneOf("options.disconnectGraceSec", "30", "60", "120")
		}
		o.Rules = RulesStandard
		return nil
	}
	chosen := o.TimeControl
	switch {
	case in.TimeControl != nil && chosen.Kind != TimePerMove:
		return FieldOneOf("options.timeControl", yeoulTimeControls...)
	case in.DrawOffer != nil && *in.DrawOffer:
		return FieldNotAllowed("options.drawOffer", "yeoulNoDrawOffer")
	case in.Undo != nil && o.Undo != UndoOff:
		return FieldNotAllowed("options.undo", "yeoulNoUndo")
	case in.DrawMode != nil && o.DrawMode != DrawAuto:
		return FieldNotAllowed("options.drawMode", "yeoulAutoDraws")
	case in.DisconnectGraceSec != nil && o.DisconnectGraceSec != YeoulGraceSec:
		return FieldNotAllowed("options.disconnectGraceSec", "yeoulGrace")
	}
	o.yeoul()
	if in.TimeControl != nil {
		o.TimeControl = chosen
	}
	return nil
}

// promotesToQueen reports whether a promotion sent without a piece becomes
// a queen: with autoQueen, and always under the yeoul rules ("고르지
// 않으면 퀸이 됩니다", seeds/003).
func (o *Options) promotesToQueen() bool { return o.AutoQueen || o.Rules == RulesYeoul }

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

// fillDefaults gives options stored before an option existed its default
// (a game of a rated room stored before the rooms played seeds/003's game
// keeps the standard rules it was created with).
func (o *Options) fillDefaults() {
	if o.Rules == "" {
		o.Rules = RulesStandard
	}
	if o.Room == "" {
		o.Room = RoomFree
	}
	if o.WaitingExpirySec == 0 {
		o.WaitingExpirySec = DefaultWaitingExpirySec
	}
}
