package rules

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"chessapi/shared/service"
)

func TestSortKeyOrdersByTimeThenID(t *testing.T) {
	at := time.UnixMilli(1_777_000_000_000)
	type game struct {
		t  time.Time
		id string
	}
	games := []game{
		{time.UnixMilli(0), "z"}, {time.UnixMilli(9), "a"}, {time.UnixMilli(10), "a"},
		{at, "a"}, {at, "a#"}, {at, "ab"}, {at, "b"}, {at.Add(time.Millisecond), ""},
		{time.UnixMilli(maxMillis - 1), "a"},
	}
	for i := range games[:len(games)-1] {
		a, b := games[i], games[i+1]
		if b.id == "" {
			b.id = "0"
		}
		ka, kb := SortKey(a.t, a.id), SortKey(b.t, b.id)
		if ka >= kb {
			t.Errorf("SortKey(%v, %q) = %q is not below SortKey(%v, %q) = %q", a.t, a.id, ka, b.t, b.id, kb)
		}
	}
	// Random pairs: byte order of the keys is the order of (ms, id).
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		ms1, ms2 := rng.Int64N(maxMillis), rng.Int64N(maxMillis)
		if rng.IntN(4) == 0 {
			ms2 = ms1
		}
		id1, id2 := randomID(rng), randomID(rng)
		want := cmpPair(ms1, ms2, id1, id2)
		if got := strings.Compare(SortKey(time.UnixMilli(ms1), id1), SortKey(time.UnixMilli(ms2), id2)); got != want {
			t.Fatalf("compare(SortKey(%d, %q), SortKey(%d, %q)) = %d; want %d", ms1, id1, ms2, id2, got, want)
		}
	}
}

func cmpPair(ms1, ms2 int64, id1, id2 string) int {
	switch {
	case ms1 < ms2:
		return -1
	case ms1 > ms2:
		return 1
	}
	return strings.Compare(id1, id2)
}

func randomID(rng *rand.Rand) string {
	const alphabet = "ab#0-_z"
	b := make([]byte, 1+rng.IntN(4))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

func TestCursorRoundTrip(t *testing.T) {
	key := SortKey(time.UnixMilli(1_777_000_000_000), "g#1")
	for _, kind := range []byte{CursorPlayerGames, CursorLobby} {
		c := EncodeCursor(kind, key)
		got, err := DecodeCursor(kind, c)
		if err != nil || got != key {
			t.Errorf("DecodeCursor(%c, EncodeCursor(%q)) = %q, %v", kind, key, got, err)
		}
		other := byte(CursorLobby)
		if kind == CursorLobby {
			other = CursorPlayerGames
		}
		if _, err := DecodeCursor(other, c); !errors.Is(err, service.ErrBadCursor) {
			t.Errorf("a %c cursor decoded as %c: %v; want ErrBadCursor", kind, other, err)
		}
	}
}

// FuzzDecodeCursor: any string either is refused with ErrBadCursor or is
// the cursor EncodeCursor gives for the sort key it decodes to.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(EncodeCursor(CursorPlayerGames, SortKey(time.UnixMilli(1), "g")))
	f.Add(EncodeCursor(CursorLobby, "0000000000000#x"))
	f.Add("")
	f.Add("cDAw+/==")
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, kind := range []byte{CursorPlayerGames, CursorLobby} {
			key, err := DecodeCursor(kind, cursor)
			if err != nil {
				if !errors.Is(err, service.ErrBadCursor) {
					t.Fatalf("DecodeCursor(%q) = %v; want ErrBadCursor", cursor, err)
				}
				continue
			}
			if _, _, err := ParseSortKey(key); err != nil {
				t.Fatalf("DecodeCursor(%q) accepted %q: %v", cursor, key, err)
			}
			if again, err := DecodeCursor(kind, EncodeCursor(kind, key)); err != nil || again != key {
				t.Fatalf("re-encoding %q: %q, %v", key, again, err)
			}
		}
	})
}

func TestValidateIndex(t *testing.T) {
	at := time.UnixMilli(1_777_000_000_000)
	long := strings.Repeat("x", MaxKeyBytes+1)
	ok := []service.GameIndex{
		{},
		{Players: [2]string{"p", ""}, CreatedAt: at, UpdatedAt: at, ListedAt: at},
		{Finished: true, CreatedAt: time.UnixMilli(0), UpdatedAt: at, ListedAt: time.UnixMilli(0)},
	}
	for _, ix := range ok {
		if err := ValidateIndex("g", ix); err != nil {
			t.Errorf("ValidateIndex(%+v) = %v; want nil", ix, err)
		}
	}
	bad := map[string]service.GameIndex{
		"CreatedAt":  {Players: [2]string{"p", ""}, UpdatedAt: at, ListedAt: at},
		"UpdatedAt":  {LobbyRoom: "r", CreatedAt: at, UpdatedAt: time.UnixMilli(maxMillis), ListedAt: at},
		"ListedAt":   {Players: [2]string{"p", ""}, CreatedAt: at, UpdatedAt: at},
		"Players[0]": {Players: [2]string{long, ""}, CreatedAt: at, UpdatedAt: at, ListedAt: at},
		"Players[1]": {Players: [2]string{"", "\xff"}, CreatedAt: at, UpdatedAt: at, ListedAt: at},
		"LobbyRoom":  {LobbyRoom: long, CreatedAt: at, UpdatedAt: at, ListedAt: at},
		"Summary":    {Summary: []byte("x")},
	}
	for field, ix := range bad {
		err := ValidateIndex("g", ix)
		if err == nil || (field != "Summary" && !strings.Contains(err.Error(), field)) {
			t.Errorf("ValidateIndex with a bad %s = %v; want an error naming it", field, err)
		}
	}
	if err := ValidateIndex(strings.Repeat("g", MaxIndexedGameID+1), ok[1]); err == nil {
		t.Error("ValidateIndex of a game id too long for a sort key = nil")
	}
}

func TestWindowAt(t *testing.T) {
	tests := []struct {
		length     time.Duration
		now        time.Time
		start, end time.Time
	}{
		{time.Minute, time.Date(2026, 1, 1, 10, 5, 59, 999, time.UTC), time.Date(2026, 1, 1, 10, 5, 0, 0, time.UTC), time.Date(2026, 1, 1, 10, 6, 0, 0, time.UTC)},
		{time.Minute, time.Date(2026, 1, 1, 10, 6, 0, 0, time.UTC), time.Date(2026, 1, 1, 10, 6, 0, 0, time.UTC), time.Date(2026, 1, 1, 10, 7, 0, 0, time.UTC)},
		{24 * time.Hour, time.Date(2026, 1, 1, 23, 0, 0, 0, time.FixedZone("KST", 9*3600)), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{time.Second, time.Unix(-1, 500), time.Unix(-1, 0), time.Unix(0, 0)}, // before 1970: floor
		{7 * time.Millisecond, time.Unix(0, 0), time.Unix(0, 0), time.Unix(0, int64(7*time.Millisecond))},
	}
	for _, tt := range tests {
		w, err := WindowAt(tt.length, tt.now)
		if err != nil || w.Start != tt.start.UnixNano() || !w.End().Equal(tt.end) {
			t.Errorf("WindowAt(%v, %v) = start %v end %v, %v; want %v, %v", tt.length, tt.now, time.Unix(0, w.Start).UTC(), w.End(), err, tt.start, tt.end)
		}
	}
	for _, length := range []time.Duration{0, -time.Second} {
		if _, err := WindowAt(length, time.Now()); err == nil {
			t.Errorf("WindowAt(%v) = nil error", length)
		}
	}
}

func TestExpiryAndStaleness(t *testing.T) {
	exp := time.UnixMilli(1_777_000_000_000).Add(300 * time.Microsecond)
	until := ValidUntil(exp) // rounded up to ...001
	for _, tt := range []struct {
		now     time.Time
		expired bool
	}{
		{exp.Add(-time.Millisecond), false},
		{exp, false}, // within the rounded-up millisecond
		{time.UnixMilli(until), true},
		{exp.Add(time.Hour), true},
	} {
		if got := Expired(until, tt.now); got != tt.expired {
			t.Errorf("Expired(%d, %v) = %v; want %v", until, tt.now, got, tt.expired)
		}
	}
	now := time.UnixMilli(1_777_000_100_000)
	if got, want := StaleBefore(30*time.Second, now), int64(1_777_000_070_000); got != want {
		t.Errorf("StaleBefore = %d; want %d", got, want)
	}
	if err := ValidateSlot("k", "v", -time.Second); err == nil {
		t.Error("ValidateSlot with a negative ttl = nil")
	}
}

func TestValidatePlayer(t *testing.T) {
	good := service.PlayerRecord{ID: "p", Version: 1, Applied: []string{"g"}}
	if err := ValidatePlayer(good); err != nil {
		t.Fatalf("ValidatePlayer(%+v) = %v", good, err)
	}
	for field, change := range map[string]func(*service.PlayerRecord){
		"ID":         func(p *service.PlayerRecord) { p.ID = "" },
		"Version":    func(p *service.PlayerRecord) { p.Version = 0 },
		"RatedGames": func(p *service.PlayerRecord) { p.RatedGames = -1 },
		"Name":       func(p *service.PlayerRecord) { p.Name = "\xc3" },
		"Applied":    func(p *service.PlayerRecord) { p.Applied = slices.Repeat([]string{"g"}, MaxApplied+1) },
		"Applied[1]": func(p *service.PlayerRecord) { p.Applied = []string{"g", ""} },
		"CreatedAt":  func(p *service.PlayerRecord) { p.CreatedAt = time.Unix(-5, 0) },
	} {
		p := good
		change(&p)
		if err := ValidatePlayer(p); err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(field)) {
			t.Errorf("ValidatePlayer with a bad %s = %v; want an error naming it", field, err)
		}
	}
}
