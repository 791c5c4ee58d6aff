package service

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"chessapi/shared/game"
)

// Names (SPEC §16.2): what a player is called in every view, list and PGN.
// A name is kept NFC-normalised (the form a keyboard makes, so one name
// has one spelling), trimmed, 1-20 characters (code points of the NFC
// form: a Hangul syllable is one), with no control, format, private-use,
// unassigned or line-breaking characters (they hide text, reorder it or
// show as nothing), and it is not a name the system uses: an AI level's
// label, an administrator, the label of a deleted player.

// MaxNameRunes is the longest player name, in characters.
const MaxNameRunes = 20

// reservedNames are the names nobody may take: every AI level's label in
// both languages (shared/api's catalogue: "AI (쉬움)", "AI (easy)", ...),
// the words for the people and parts that run the service, and the
// deleted player's label in both languages. They are compared by
// nameKey, so "A I(EASY)" and "ａｄｍｉｎ" are taken too.
var reservedNames = func() map[string]bool {
	names := []string{
		"AI", "admin", "administrator", "system", "관리자", "운영자", "시스템",
		"탈퇴한 사용자", game.DeletedPlayerName,
		"AI (쉬움)", "AI (보통)", "AI (어려움)", "AI (최강)",
	}
	for _, level := range game.AILevels {
		names = append(names, "AI ("+level+")")
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[nameKey(n)] = true
	}
	return out
}()

// fold is the case folding of nameKey (Unicode full case folding, so
// "ADMIN", "admin" and "Admin" are one key).
var fold = cases.Fold()

// nameKey is the form two names are compared in: compatibility-normalised
// (NFKC: full-width and other look-alike forms become their plain
// letters), case-folded, and without any white space.
func nameKey(name string) string {
	k := fold.String(norm.NFKC.String(name))
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, k)
}

// ReservedName reports whether name is one nobody may take.
func ReservedName(name string) bool { return reservedNames[nameKey(name)] }

// CheckName validates a player's name given in field and returns it as
// stored: a *game.InputError for field when it is empty after trimming,
// too long, holds a character a name may not hold, or is reserved.
func CheckName(field, name string) (string, error) {
	return checkDisplayName(field, name, MaxNameRunes, false)
}

// checkDisplayName is the rule of names: of players (1..max characters)
// and of anonymous seats (0..max: an empty name is no name).
func checkDisplayName(field, name string, maxRunes int, emptyOK bool) (string, error) {
	if !utf8.ValidString(name) {
		return "", game.FieldLength(field, maxRunes)
	}
	name = strings.TrimSpace(norm.NFC.String(name))
	switch n := utf8.RuneCountInString(name); {
	case n == 0 && emptyOK:
		return "", nil
	case n == 0:
		return "", game.FieldNotAllowed(field, "empty")
	case n > maxRunes:
		return "", game.FieldLength(field, maxRunes)
	}
	for _, r := range name {
		if !nameRune(r) {
			return "", game.FieldLength(field, maxRunes)
		}
	}
	if ReservedName(name) {
		return "", game.FieldNotAllowed(field, "reservedName")
	}
	return name, nil
}

// nameRune reports whether a name may hold r: not a control (Cc), format
// (Cf: zero-width and bidirectional marks), private-use (Co), surrogate
// (Cs) or unassigned (Cn) code point, nor a line or paragraph separator.
func nameRune(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return false
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp):
		return false
	}
	// Assigned: in some category of the Unicode tables (unassigned code
	// points are in none).
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs)
}
