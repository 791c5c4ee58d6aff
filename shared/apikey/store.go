package apikey

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits are what one key may use.
type Limits struct {
	// PerSecond is the most requests counted in one second (fixed
	// windows starting at whole seconds: a burst across a window's edge
	// may reach twice this in a moment, never more).
	PerSecond int64
	// PerDay is the most requests counted in one UTC day.
	PerDay int64
	// InFlight is the most requests of the key being answered at once,
	// across every instance (0: DefaultInFlight, the value of records
	// stored before the limit existed). A request holds one of them from
	// its admission to its answer: a key within its rate (5 a second)
	// whose requests each search for 10 s would otherwise hold 50 AI
	// instances, more than the endpoint's whole reserved concurrency.
	InFlight int64
}

// Bounds of the limits a key may be given. MaxInFlight is also what a
// refused admission may cost at most (the data table's leases are one
// item a key, so it is a bound on that item's size, not on writes).
const (
	MaxPerSecond = 1000
	MaxPerDay    = 1_000_000_000
	MaxInFlight  = 20
)

// DefaultInFlight is the in-flight limit of a key that names none: two
// requests at once, so that ten keys are needed to fill the AI
// endpoint's default reserved concurrency of 20 (template.yaml,
// AiConcurrency).
const DefaultInFlight = 2

// DefaultLimits are a new key's limits unless its maker says otherwise:
// an AI request can hold a 1769 MB function for up to 10 s, so a partner
// gets a few a second, two at once, and a day's worth that costs a few
// dollars at most.
var DefaultLimits = Limits{PerSecond: 5, PerDay: 10_000, InFlight: DefaultInFlight}

// MaxInFlightRequests is the in-flight limit in force: InFlight, or
// DefaultInFlight when it is 0.
func (l Limits) MaxInFlightRequests() int64 {
	if l.InFlight == 0 {
		return DefaultInFlight
	}
	return l.InFlight
}

// FieldError names the field of a record, a flag or a request that is
// wrong, and why.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return "apikey: " + e.Field + " " + e.Problem }

// Validate checks l against the bounds.
func (l Limits) Validate() error {
	if l.PerSecond < 1 || l.PerSecond > MaxPerSecond {
		return &FieldError{"perSecond", fmt.Sprintf("= %d is not between 1 and %d", l.PerSecond, MaxPerSecond)}
	}
	if l.PerDay < 1 || l.PerDay > MaxPerDay {
		return &FieldError{"perDay", fmt.Sprintf("= %d is not between 1 and %d", l.PerDay, MaxPerDay)}
	}
	if l.InFlight < 0 || l.InFlight > MaxInFlight {
		return &FieldError{"inFlight", fmt.Sprintf("= %d is not between 1 and %d (0: the default, %d)", l.InFlight, MaxInFlight, DefaultInFlight)}
	}
	return nil
}

// MaxNameLen bounds a key's name, in characters.
const MaxNameLen = 64

// ValidateName checks a key's name: who holds the key, for the people
// reading a listing. 1 to MaxNameLen printable characters, no line
// breaks or other controls (a listing is one key a line).
func ValidateName(name string) error {
	switch {
	case name == "":
		return &FieldError{"name", "is empty (say who holds the key)"}
	case !utf8.ValidString(name):
		return &FieldError{"name", "is not valid UTF-8"}
	case utf8.RuneCountInString(name) > MaxNameLen:
		return &FieldError{"name", fmt.Sprintf("is longer than %d characters", MaxNameLen)}
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return &FieldError{"name", fmt.Sprintf("contains the non-printable character %U", r)}
		}
	}
	return nil
}

// Record is a stored key: everything but its secret.
type Record struct {
	ID string
	// Name says who holds the key.
	Name string
	// Hash is Key.Hash of the key.
	Hash   string
	Limits Limits
	// CreatedAt and RevokedAt are in UTC, to the millisecond (the stores
	// keep milliseconds). RevokedAt is zero while the key is valid.
	CreatedAt time.Time
	RevokedAt time.Time
}

// Revoked reports whether the key has been revoked.
func (r Record) Revoked() bool { return !r.RevokedAt.IsZero() }

// Validate checks a record before it is stored.
func (r Record) Validate() error {
	if !ValidID(r.ID) {
		return &FieldError{"id", "is not a key id of the issued form"}
	}
	if h, err := hex.DecodeString(r.Hash); err != nil || len(h) != 32 || hex.EncodeToString(h) != r.Hash {
		return &FieldError{"hash", "is not a lowercase hex SHA-256"}
	}
	if err := ValidateName(r.Name); err != nil {
		return err
	}
	if r.CreatedAt.IsZero() {
		return &FieldError{"createdAt", "is not set"}
	}
	return r.Limits.Validate()
}

// NewRecord makes a new key with its record, created at now (rounded to
// the millisecond, as stored), after checking name and limits. Store the
// record, then hand the key's text to its holder: it is never shown again.
func NewRecord(random io.Reader, name string, limits Limits, now time.Time) (Key, Record, error) {
	if err := ValidateName(name); err != nil {
		return Key{}, Record{}, err
	}
	if err := limits.Validate(); err != nil {
		return Key{}, Record{}, err
	}
	k, err := Generate(random)
	if err != nil {
		return Key{}, Record{}, err
	}
	rec := Record{ID: k.ID, Name: name, Hash: k.Hash(), Limits: limits, CreatedAt: StoredTime(now)}
	return k, rec, nil
}

// StoredTime is t as the stores keep it: UTC, whole milliseconds.
func StoredTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// Errors of the Store port.
var (
	ErrNotFound = errors.New("apikey: no such key")
	ErrExists   = errors.New("apikey: a key with this id exists")
)

// Store keeps the key records: the data table on AWS, the embedded store
// locally. Lookups are by id only; listing is for the key command.
type Store interface {
	// PutAPIKey stores a new record; ErrExists if its id is taken (the
	// write is conditional: a key is never overwritten).
	PutAPIKey(ctx context.Context, rec Record) error
	// APIKey reads a record, strongly consistent (a revocation counts at
	// once); ErrNotFound.
	APIKey(ctx context.Context, id string) (Record, error)
	// APIKeys lists every record, revoked ones included, oldest first
	// (ties by id). It may trail the latest writes by a moment.
	APIKeys(ctx context.Context) ([]Record, error)
	// RevokeAPIKey marks the key revoked at at and returns its record, and
	// whether this call revoked it. Revoking a revoked key changes nothing
	// (the first time stays; revoked is false); of concurrent calls exactly
	// one revokes. ErrNotFound if there is no such key.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (rec Record, revoked bool, err error)
}
