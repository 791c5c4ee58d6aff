package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"chessapi/shared/chess"
	"chessapi/shared/credential"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// Accounts (SPEC §16.2) through the service on real stores: names,
// sessions, recovery, blocks, public profiles, rematches and the deletion
// of a player.

func TestNames(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
		why      string
	}{
		{"지우", "지우", true, "Hangul"},
		{"  Jiwoo  ", "Jiwoo", true, "trimmed"},
		{"\u1100\u1161", "\uac00", true, "NFC: a jamo pair is one syllable"},
		{"e\u0301", "é", true, "NFC: a combining accent composes"},
		{strings.Repeat("가", 20), strings.Repeat("가", 20), true, "20 characters"},
		{strings.Repeat("가", 21), "", false, "21 characters"},
		{"", "", false, "empty"},
		{"   ", "", false, "only spaces"},
		{"a\tb", "", false, "a control character"},
		{"a\u200bb", "", false, "a zero-width space (format)"},
		{"a\u202eb", "", false, "a bidi override (format)"},
		{"a\ue000b", "", false, "private use"},
		{"a\u2028b", "", false, "a line separator"},
		{"a\U000e0001b", "", false, "a tag character (format)"},
		{"a\u0378b", "", false, "an unassigned code point"},
		{"\xff", "", false, "not UTF-8"},
		{"AI", "", false, "reserved: AI"},
		{"a i", "", false, "reserved: ai with a space"},
		{"AI (쉬움)", "", false, "an AI level's Korean label"},
		{"ai(EASY)", "", false, "an AI level's English label, any case and spacing"},
		{"AI (최강)", "", false, "the strongest level"},
		{"Admin", "", false, "admin"},
		{"ADMINISTRATOR", "", false, "administrator"},
		{"ｓｙｓｔｅｍ", "", false, "system in full-width letters"},
		{"관 리 자", "", false, "관리자 with spaces"},
		{"운영자", "", false, "운영자"},
		{"시스템", "", false, "시스템"},
		{"탈퇴한사용자", "", false, "the deleted player's Korean label"},
		{"deleted PLAYER", "", false, "the deleted player's English label"},
		{"AI (보통) 팬", "AI (보통) 팬", true, "a name that only starts like a label"},
		{"Admiral", "Admiral", true, "not admin"},
		{"체스 🐴", "체스 🐴", true, "an emoji"},
	} {
		got, err := service.CheckName("name", tt.in)
		var ie *game.InputError
		switch {
		case tt.ok && (err != nil || got != tt.want):
			t.Errorf("%s: CheckName(%q) = %q, %v; want %q", tt.why, tt.in, got, err, tt.want)
		case !tt.ok && (!errors.As(err, &ie) || ie.Field != "name"):
			t.Errorf("%s: CheckName(%q) = %q, %v; want an invalid_field error on name", tt.why, tt.in, got, err)
		}
	}
}

// FuzzCheckName: any input is refused with an error on its field or
// accepted as a name that follows the rules and is its own normal form.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"", "지우", "AI (쉬움)", "a\u200bb", "ｓｙｓｔｅｍ", "\xff", strings.Repeat("가", 21), " e\u0301 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := service.CheckName("name", in)
		if err != nil {
			var ie *game.InputError
			if !errors.As(err, &ie) || ie.Field != "name" {
				t.Fatalf("CheckName(%q) = %v; want an input error on name", in, err)
			}
			return
		}
		n := utf8.RuneCountInString(got)
		if n < 1 || n > service.MaxNameRunes || strings.TrimSpace(got) != got || service.ReservedName(got) {
			t.Fatalf("CheckName(%q) = %q: breaks the rules", in, got)
		}
		if again, err := service.CheckName("name", got); err != nil || again != got {
			t.Fatalf("CheckName(%q) = %q, but CheckName of that = %q, %v", in, got, again, err)
		}
	})
}

func TestCreatePlayerNames(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	np, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{})
	if err != nil || !strings.HasPrefix(np.Player.Name, "Player ") || service.ReservedName(np.Player.Name) {
		t.Fatalf("a player without a name: %+v, %v; want a default name", np.Player, err)
	}
	if _, err := service.CheckName("name", np.Player.Name); err != nil {
		t.Errorf("the default name %q breaks the rules: %v", np.Player.Name, err)
	}
	for _, bad := range []string{"", "AI (easy)", "관리자"} {
		if _, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr(bad)}); err == nil {
			t.Errorf("a player named %q was created", bad)
		}
		if _, err := f.svc.Rename(ctx, service.Caller{Token: np.Token}, bad); err == nil {
			t.Errorf("renamed to %q", bad)
		}
	}
	// An anonymous seat cannot pose as the system either.
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Player: service.PlayerInput{Name: "Deleted player"}}); err == nil {
		t.Error("an anonymous seat took the deleted player's label")
	}
}

// boundGame is a free-room game between two players, white the host.
func (f *playerFixture) boundGame(t *testing.T, white, black service.Caller) string {
	t.Helper()
	host, err := f.svc.Create(t.Context(), service.CreateInput{Options: options(t, `{"colorAssignment":"hostWhite"}`), Caller: white})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(t.Context(), host.GameID, service.JoinInput{Caller: black}); err != nil {
		t.Fatal(err)
	}
	return host.GameID
}

// legacyTokens is a players store whose tokens look as they did before
// sessions for the hashes in legacy (PlayerByToken gives no session id),
// until AdoptToken is called for them: the store adopts for real.
type legacyTokens struct {
	service.Players
	mu      sync.Mutex
	legacy  map[string]bool
	adopted int
}

func (l *legacyTokens) PlayerByToken(ctx context.Context, hash string) (service.PlayerRecord, service.Session, error) {
	p, s, err := l.Players.PlayerByToken(ctx, hash)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && l.legacy[hash] {
		s = service.Session{PlayerID: s.PlayerID, TokenHash: hash}
	}
	return p, s, err
}

func (l *legacyTokens) AdoptToken(ctx context.Context, s service.Session) (service.Session, error) {
	l.mu.Lock()
	delete(l.legacy, s.TokenHash)
	l.adopted++
	l.mu.Unlock()
	// The real store holds the token's session already: that one stands,
	// as a store's adoption keeps a session the token has.
	_, stored, err := l.Players.PlayerByToken(ctx, s.TokenHash)
	return stored, err
}

func TestSessions(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	np, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("Alice")})
	if err != nil || !credential.SessionID.WellFormed(np.SessionID) || !credential.RecoveryCode.WellFormed(np.RecoveryCode) {
		t.Fatalf("create: %+v, %v; want a session id and a recovery code", np, err)
	}
	phone := service.Caller{Token: np.Token}
	lc, err := f.svc.NewLinkCode(ctx, phone)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	linked, err := f.svc.Link(ctx, lc.Code, "198.51.100.1")
	if err != nil || linked.SessionID == "" || linked.SessionID == np.SessionID || linked.RecoveryCode != "" {
		t.Fatalf("link: %+v, %v; want a second session and no recovery code", linked, err)
	}
	tablet := service.Caller{Token: linked.Token}
	if _, err := f.svc.LabelCurrentSession(ctx, tablet, "  iPad  "); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.LabelCurrentSession(ctx, tablet, strings.Repeat("x", 41)); err == nil {
		t.Error("a 41-character label was taken")
	}
	list, err := f.svc.Sessions(ctx, phone)
	if err != nil || len(list) != 2 || list[0].ID != np.SessionID || !list[0].Current || list[1].Current || list[1].Label != "iPad" {
		t.Fatalf("sessions seen from the phone: %+v, %v; want the phone's (current) first, then the labelled iPad", list, err)
	}

	// Use is recorded at most every SessionTouchEvery.
	f.clock.Advance(service.SessionTouchEvery + time.Second)
	if _, err := f.svc.Me(ctx, tablet); err != nil {
		t.Fatal(err)
	}
	list, _ = f.svc.Sessions(ctx, phone)
	if !list[1].LastUsedAt.Equal(f.clock.Now().UTC().Truncate(time.Millisecond)) || !list[0].LastUsedAt.Equal(f.clock.Now().UTC().Truncate(time.Millisecond)) {
		t.Errorf("lastUsedAt after use: %v, %v; want now for both (the phone listed them)", list[0].LastUsedAt, list[1].LastUsedAt)
	}

	// Revoking the tablet: its token is nobody from the next request,
	// and the hooks learn of it.
	var ended []service.Session
	f.svc.OnSessionsEnded(func(_ context.Context, s []service.Session) error { ended = append(ended, s...); return nil })
	if err := f.svc.RevokeSession(ctx, phone, linked.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Me(ctx, tablet); !errors.Is(err, service.ErrInvalidToken) {
		t.Errorf("the revoked token: %v; want invalid token", err)
	}
	if len(ended) != 1 || ended[0].ID != linked.SessionID || ended[0].TokenHash != service.HashToken(linked.Token) {
		t.Errorf("hooks told %+v; want the tablet's session", ended)
	}
	if err := f.svc.RevokeSession(ctx, phone, linked.SessionID); !errors.Is(err, service.ErrSessionNotFound) {
		t.Errorf("revoking it again: %v; want session not found", err)
	}
	if err := f.svc.RevokeSession(ctx, phone, "not-a-session"); !errors.Is(err, service.ErrSessionNotFound) {
		t.Errorf("revoking a malformed id: %v; want session not found", err)
	}
	// Another player cannot revoke the phone's session.
	bob := f.player(t, "Bob")
	if err := f.svc.RevokeSession(ctx, bob, np.SessionID); !errors.Is(err, service.ErrSessionNotFound) {
		t.Errorf("another player revoking it: %v; want session not found", err)
	}
	// The phone revokes itself.
	if err := f.svc.RevokeSession(ctx, phone, np.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Sessions(ctx, phone); !errors.Is(err, service.ErrInvalidToken) {
		t.Errorf("after revoking itself: %v; want invalid token", err)
	}
}

// A token issued before sessions is given its session at its first use
// that is not a view, and listed from then on.
func TestLegacyTokensAdoptedLazily(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	np, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("Old")})
	if err != nil {
		t.Fatal(err)
	}
	lt := &legacyTokens{Players: f.players, legacy: map[string]bool{service.HashToken(np.Token): true}}
	svc, err := service.New(service.Config{Store: f.store, Players: lt, Lister: f.store.(service.GameLister), Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	old := service.Caller{Token: np.Token}
	g, err := svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Caller: old})
	if err != nil {
		t.Fatal(err)
	}
	if lt.adopted != 1 {
		t.Errorf("a write with an old token: %d adoptions; want 1 (a write records the session)", lt.adopted)
	}
	lt.legacy[service.HashToken(np.Token)] = true
	lt.adopted = 0
	if _, err := svc.Get(ctx, g.GameID, old, nil, 0); err != nil || lt.adopted != 0 {
		t.Errorf("a view with an old token: %v, %d adoptions; want it served without one (views only read)", err, lt.adopted)
	}
	if list, err := svc.Sessions(ctx, old); err != nil || lt.adopted != 1 || len(list) != 1 || !list[0].Current {
		t.Errorf("the player routes with an old token: %+v, %v, %d adoptions; want its session, current", list, err, lt.adopted)
	}
}

func TestRecovery(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	np, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("Lost")})
	if err != nil {
		t.Fatal(err)
	}
	id := np.Player.PlayerID
	typed := strings.ToLower(strings.ReplaceAll(np.RecoveryCode, "-", " "))
	rec, err := f.svc.Recover(ctx, id, typed)
	if err != nil || rec.Player.PlayerID != id || rec.Token == np.Token || rec.SessionID == "" {
		t.Fatalf("recover: %+v, %v; want a new session of %s", rec, err, id)
	}
	if f.me(t, service.Caller{Token: rec.Token}).PlayerID != id || f.me(t, service.Caller{Token: np.Token}).PlayerID != id {
		t.Error("the recovered and the first session do not both act as the player")
	}
	// A re-issued code replaces the old.
	fresh, err := f.svc.NewRecoveryCode(ctx, service.Caller{Token: rec.Token})
	if err != nil || fresh == np.RecoveryCode {
		t.Fatalf("new recovery code: %q, %v", fresh, err)
	}
	if _, err := f.svc.Recover(ctx, id, np.RecoveryCode); !errors.Is(err, service.ErrRecoveryCodeInvalid) {
		t.Errorf("the old code: %v; want recovery_code_invalid", err)
	}
	if _, err := f.svc.Recover(ctx, id, fresh); err != nil {
		t.Errorf("the new code: %v", err)
	}
	for _, bad := range []struct{ id, code string }{{"pl_NoSuchPlayerAtAll0000", fresh}, {"nobody", fresh}, {id, "not a code"}, {id, ""}} {
		if _, err := f.svc.Recover(ctx, bad.id, bad.code); !errors.Is(err, service.ErrRecoveryCodeInvalid) {
			t.Errorf("recover(%q, %q): %v; want recovery_code_invalid", bad.id, bad.code, err)
		}
	}
}

// Guessing a player's recovery code: ten wrong codes in the window, then
// every try waits for its end, the right code too; from another player's
// account nothing is counted against this one.
func TestRecoveryBruteForce(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	victim, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("Victim")})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("Other")})
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := credential.RecoveryCode.Mint(strings.NewReader(strings.Repeat("z", 24)))
	if err != nil {
		t.Fatal(err)
	}
	// Two checked by one process at a time is enough; the counts are the
	// store's (exact under concurrency, shared/store/storetest).
	var wg sync.WaitGroup
	errs := make([]error, service.RecoveryFailuresAllowed)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.svc.Recover(ctx, victim.Player.PlayerID, wrong)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, service.ErrRecoveryCodeInvalid) {
			t.Fatalf("wrong try %d: %v", i, err)
		}
	}
	var limited *service.RateLimitError
	if _, err := f.svc.Recover(ctx, victim.Player.PlayerID, victim.RecoveryCode); !errors.As(err, &limited) ||
		limited.RetryAfter() <= 0 || limited.RetryAfter() > service.RecoveryWindow {
		t.Fatalf("the right code after ten wrong ones: %v; want rate limited within the window", err)
	}
	if _, err := f.svc.Recover(ctx, other.Player.PlayerID, other.RecoveryCode); err != nil {
		t.Errorf("another player's recovery: %v; the limit is per player", err)
	}
	f.clock.Advance(limited.RetryAfter())
	if _, err := f.svc.Recover(ctx, victim.Player.PlayerID, victim.RecoveryCode); err != nil {
		t.Errorf("the right code after the window: %v", err)
	}
}

func TestPublicProfile(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	a, b := f.player(t, "Ann"), f.player(t, "Ben")
	g := f.ratedGame(t, "intermediate", a, b)
	f.foolsMate(t, g, a, b)
	p, err := f.svc.PublicProfileOf(ctx, f.me(t, b).PlayerID)
	if err != nil || p.Name != "Ben" || p.Rating != 1020 || p.RatedGames != 1 || len(p.RatingHistory) != 1 ||
		p.RatingHistory[0].GameID != g || p.RatingHistory[0].After != 1020 {
		t.Fatalf("Ben's public profile: %+v, %v", p, err)
	}
	for _, id := range []string{"pl_NoSuchPlayerAtAll0000", "garbage", ""} {
		if _, err := f.svc.PublicProfileOf(ctx, id); !errors.Is(err, service.ErrPlayerNotFound) {
			t.Errorf("profile of %q: %v; want player not found", id, err)
		}
	}
}

func TestBlocks(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	a, b, c := f.player(t, "Ann"), f.player(t, "Ben"), f.player(t, "Cy")
	aID := f.me(t, a).PlayerID
	if err := f.svc.Block(ctx, a, aID); err == nil {
		t.Error("a player blocked itself")
	}
	if err := f.svc.Block(ctx, a, "pl_NoSuchPlayerAtAll0000"); !errors.Is(err, service.ErrPlayerNotFound) {
		t.Errorf("blocking nobody: %v; want player not found", err)
	}
	if err := f.svc.Block(ctx, b, aID); err != nil {
		t.Fatal(err)
	}
	list, err := f.svc.Blocks(ctx, b)
	if err != nil || len(list) != 1 || list[0].PlayerID != aID || list[0].Name != "Ann" {
		t.Fatalf("Ben's blocks: %+v, %v", list, err)
	}
	// Either way: Ann cannot join Ben's game, nor Ben Ann's; Cy can.
	for _, pair := range [][2]service.Caller{{a, b}, {b, a}} {
		host, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Caller: pair[0]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Caller: pair[1]}); !errors.Is(err, service.ErrBlocked) {
			t.Errorf("join across a block: %v; want blocked", err)
		}
		if _, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Caller: c}); err != nil {
			t.Errorf("a third player joins: %v", err)
		}
	}
	// Quick pairing never pairs them: Ann waits, Ben gets a game of his own.
	qa, err := f.svc.QuickPair(ctx, service.QuickInput{Room: game.RoomFree, Caller: a})
	if err != nil || qa.Matched {
		t.Fatalf("Ann's quick pairing: %+v, %v; want waiting", qa, err)
	}
	qb, err := f.svc.QuickPair(ctx, service.QuickInput{Room: game.RoomFree, Caller: b})
	if err != nil || qb.Matched || qb.GameID == qa.GameID {
		t.Fatalf("Ben's quick pairing: %+v, %v; want a game of his own, not Ann's %s", qb, err, qa.GameID)
	}
	qc, err := f.svc.QuickPair(ctx, service.QuickInput{Room: game.RoomFree, Caller: c})
	if err != nil || !qc.Matched || (qc.GameID != qa.GameID && qc.GameID != qb.GameID) {
		t.Errorf("Cy's quick pairing: %+v, %v; want one of the two waiting games", qc, err)
	}
	// Lifted, they play.
	if err := f.svc.Unblock(ctx, b, aID); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Unblock(ctx, b, aID); err != nil {
		t.Errorf("unblocking again: %v", err)
	}
	host, _ := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Caller: a})
	if _, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Caller: b}); err != nil {
		t.Errorf("join after the block is lifted: %v", err)
	}
}

func TestRematch(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	a, b, c := f.player(t, "Ann"), f.player(t, "Ben"), f.player(t, "Cy")
	opts := options(t, `{"colorAssignment":"hostWhite","timeControl":"3+2","variant":"chess960","firstMoveSec":60,"drawMode":"fide"}`)
	opts.Undo, opts.DrawOffer, opts.Hints = game.UndoOff, false, game.HintsOff
	first, err := f.svc.Create(ctx, service.CreateInput{Options: opts, Caller: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(ctx, first.GameID, service.JoinInput{Caller: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Act(ctx, first.GameID, b, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Create(ctx, service.CreateInput{RematchOf: first.GameID, Caller: c}); !errors.Is(err, service.ErrForbidden) {
		t.Errorf("a stranger's rematch: %v; want forbidden", err)
	}
	re, err := f.svc.Create(ctx, service.CreateInput{RematchOf: first.GameID, Caller: b})
	if err != nil {
		t.Fatal(err)
	}
	o := re.Game.Options
	if o.TimeControl != opts.TimeControl || o.Variant != game.VariantChess960 || o.Room != game.RoomFree ||
		o.Undo != game.UndoOff || o.DrawOffer || o.FirstMoveSec != 60 || o.DrawMode != game.DrawFIDE || o.Hints != game.HintsOff {
		t.Errorf("the rematch's options %+v; want the first game's", o)
	}
	if re.Game.You == nil || *re.Game.You != chess.White {
		t.Errorf("Ben (black in the first game) hosts the rematch as %v; want white", re.Game.You)
	}
	var exists *service.RematchExistsError
	if _, err := f.svc.Create(ctx, service.CreateInput{RematchOf: first.GameID, Caller: a}); !errors.As(err, &exists) || exists.GameID != re.GameID {
		t.Errorf("a second rematch: %v; want rematch_exists naming %s", err, re.GameID)
	}
	joined, err := f.svc.Join(ctx, re.GameID, service.JoinInput{Caller: a})
	if err != nil || *joined.Game.You != chess.Black {
		t.Fatalf("Ann joins the rematch: %+v, %v; want black", joined.Game, err)
	}

	// Blocked players cannot rematch.
	if _, err := f.svc.Act(ctx, re.GameID, a, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Block(ctx, a, f.me(t, b).PlayerID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Create(ctx, service.CreateInput{RematchOf: re.GameID, Caller: b}); !errors.Is(err, service.ErrBlocked) {
		t.Errorf("a rematch across a block: %v; want blocked", err)
	}

	// Join of a game that ended: game_not_waiting, not game_full.
	if _, err := f.svc.Join(ctx, first.GameID, service.JoinInput{Caller: c}); ruleCode(err) != game.CodeGameNotWaiting {
		t.Errorf("join of a finished game: %v; want game_not_waiting", err)
	}
}

// The list entries have what a list screen draws.
func TestMyGamesEntries(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	a, b := f.player(t, "Ann"), f.player(t, "Ben")
	host, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{"colorAssignment":"hostWhite","timeControl":"5+3"}`), Caller: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Caller: b}); err != nil {
		t.Fatal(err)
	}
	for i, m := range []string{"e2e4", "e7e5"} {
		if _, err := f.svc.Act(ctx, host.GameID, []service.Caller{a, b}[i], service.ActionInput{Action: moveUCI(m)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		who      service.Caller
		color    chess.Color
		myTurn   bool
		opponent string
	}{{a, chess.White, true, "Ben"}, {b, chess.Black, false, "Ann"}} {
		page, err := f.svc.MyGames(ctx, tt.who, false, 10, "")
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("my games: %+v, %v", page, err)
		}
		g := page.Items[0]
		opp := g.State.Seats[g.MyColor.Other()]
		if g.MyColor != tt.color || g.IsMyTurn() != tt.myTurn || opp.Name != tt.opponent || g.View.LastMove == nil ||
			g.View.LastMove.UCI != "e7e5" || g.View.FEN != "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2" ||
			g.View.Deadline == nil || g.View.DeadlineReason == nil || *g.View.DeadlineReason != "clock" || g.View.Clock.Type != "fischer" {
			t.Errorf("entry for %v: colour %v, my turn %v, opponent %q, last move %+v, fen %q, deadline %v %v, clock %+v",
				tt.color, g.MyColor, g.IsMyTurn(), opp.Name, g.View.LastMove, g.View.FEN, g.View.Deadline, g.View.DeadlineReason, g.View.Clock)
		}
	}
}

// TestDeleteAccount: a player's deletion on every store ends their games
// as the rules say, takes their name out of every game, list, lobby entry
// and PGN, leaves the rated numbers, and is idempotent for the same token.
func TestDeleteAccount(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newPlayerFixture(t, open)
			ctx := t.Context()
			alice := f.player(t, "Alice Liddell")
			bob, carol := f.player(t, "Bob"), f.player(t, "Carol")
			aliceID := f.me(t, alice).PlayerID
			if err := f.svc.Block(ctx, alice, f.me(t, carol).PlayerID); err != nil {
				t.Fatal(err)
			}
			if err := f.svc.Block(ctx, bob, aliceID); err != nil {
				t.Fatal(err)
			}
			if err := f.svc.Unblock(ctx, bob, aliceID); err != nil { // Bob plays Alice below
				t.Fatal(err)
			}
			if err := f.svc.Block(ctx, carol, aliceID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.NewLinkCode(ctx, alice); err != nil {
				t.Fatal(err)
			}

			// A waiting game of hers, in the lobby.
			waiting, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Caller: alice})
			if err != nil {
				t.Fatal(err)
			}
			// A rated game in play (both have moved): she resigns by leaving.
			rated := f.ratedGame(t, "intermediate", bob, alice)
			for i, m := range []string{"e2e4", "e7e5"} {
				if _, err := f.svc.Act(ctx, rated, []service.Caller{bob, alice}[i], service.ActionInput{Action: moveUCI(m)}); err != nil {
					t.Fatal(err)
				}
			}
			// A game in play before her first move: aborted.
			early := f.boundGame(t, bob, alice)
			if _, err := f.svc.Act(ctx, early, bob, service.ActionInput{Action: moveUCI("d2d4")}); err != nil {
				t.Fatal(err)
			}
			// A finished game, and Bob's rematch of it waiting for her.
			done := f.boundGame(t, alice, bob)
			if _, err := f.svc.Act(ctx, done, alice, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
				t.Fatal(err)
			}
			rematch, err := f.svc.Create(ctx, service.CreateInput{RematchOf: done, Caller: bob})
			if err != nil {
				t.Fatal(err)
			}

			var ended []service.Session
			f.svc.OnSessionsEnded(func(_ context.Context, s []service.Session) error { ended = append(ended, s...); return nil })
			if err := f.svc.DeleteMe(ctx, alice); err != nil {
				t.Fatal(err)
			}
			if len(ended) != 1 || ended[0].PlayerID != aliceID {
				t.Errorf("sessions ended: %+v; want Alice's one", ended)
			}
			if err := f.svc.DeleteMe(ctx, alice); err != nil {
				t.Errorf("the deletion retried with the same token: %v; want it answered again", err)
			}
			if _, err := f.svc.Me(ctx, alice); !errors.Is(err, service.ErrInvalidToken) {
				t.Errorf("her token afterwards: %v; want invalid token", err)
			}
			if _, err := f.svc.PublicProfileOf(ctx, aliceID); !errors.Is(err, service.ErrPlayerNotFound) {
				t.Errorf("her profile: %v; want player not found", err)
			}

			results := map[string]game.Reason{waiting.GameID: game.ReasonCancelled, rated: game.ReasonResign, early: game.ReasonAborted, rematch.GameID: game.ReasonCancelled}
			for id, want := range results {
				v, err := f.svc.Get(ctx, id, service.Caller{}, nil, 0)
				if err != nil || v.Phase != game.PhaseFinished || v.Result == nil || v.Result.Reason != want {
					t.Errorf("game %s after the deletion: %v %+v; want finished, %s", id, err, v.Result, want)
				}
			}
			v, _ := f.svc.Get(ctx, rated, bob, nil, 0)
			if v.Result.Winner == nil || *v.Result.Winner != chess.White || v.Result.RatingChange == nil || v.Result.RatingChange.White.After <= 1000 {
				t.Errorf("the rated game: %+v; want Bob (white) the winner, rated up", v.Result)
			}
			if bp := f.me(t, bob); bp.RatedGames != 1 || bp.Rating != v.Result.RatingChange.White.After {
				t.Errorf("Bob after the deletion: %+v; want the rated win counted", bp)
			}
			if prof, err := f.svc.PublicProfileOf(ctx, f.me(t, bob).PlayerID); err != nil || len(prof.RatingHistory) != 1 || prof.RatingHistory[0].GameID != rated {
				t.Errorf("Bob's history: %+v, %v; want the rated game, kept", prof.RatingHistory, err)
			}

			// Her name is nowhere: views, PGNs, Bob's lists, the lobby.
			for _, id := range []string{waiting.GameID, rated, early, done, rematch.GameID} {
				v, err := f.svc.Get(ctx, id, service.Caller{}, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				if js, _ := json.Marshal(v); strings.Contains(string(js), "Alice") {
					t.Errorf("game %s's view still names her: %s", id, js)
				}
				pgn, err := f.svc.PGN(ctx, id, service.Caller{})
				if err != nil || strings.Contains(pgn, "Alice") || (id != rematch.GameID && !strings.Contains(pgn, game.DeletedPlayerName)) {
					t.Errorf("game %s's PGN: %v\n%s", id, err, pgn)
				}
			}
			for _, finished := range []bool{false, true} {
				page, err := f.svc.MyGames(ctx, bob, finished, 100, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, g := range page.Items {
					if js, _ := json.Marshal(g.View); strings.Contains(string(js), "Alice") {
						t.Errorf("Bob's list still names her: %s", js)
					}
				}
			}
			lobby, _ := f.svc.Lobby(ctx, game.RoomFree, 100, "", service.LobbyFilter{})
			for _, it := range lobby.Items {
				if it.GameID == waiting.GameID {
					t.Error("her cancelled game is still in the lobby")
				}
				if js, _ := json.Marshal(it); strings.Contains(string(js), "Alice") {
					t.Errorf("the lobby still names her: %s", js)
				}
			}
			if list, err := f.svc.Blocks(ctx, carol); err != nil || len(list) != 0 {
				t.Errorf("Carol's blocks: %+v, %v; want hers of Alice gone", list, err)
			}
			// Her seat tokens went too: the old seat cannot act or rematch.
			if _, err := f.svc.Create(ctx, service.CreateInput{RematchOf: waiting.GameID, Caller: service.Caller{Token: waiting.Token}}); !errors.Is(err, service.ErrForbidden) {
				t.Errorf("her old seat token asks for a rematch of her game: %v; want forbidden (seat tokens go with her)", err)
			}
		})
	}
}

// TestRatingsChain: twenty rated games of one player end at once; the
// player's results apply one at a time: each game's before is the rating
// just before its application, the next one's before is this one's after,
// and the profile is the last after. Every caller succeeds without
// retrying (ErrBusy would fail the test).
func TestRatingsChain(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newPlayerFixture(t, open)
			testRatingsChain(t, f, []*service.Service{f.svc})
		})
	}
}

// TestRatingsChainAcrossProcesses: the same with four services on one
// store, as four Lambda instances of the fan-out would apply them: the
// per-process queue does not cover the others, the conditional write and
// retry.PlayerWrite do.
func TestRatingsChainAcrossProcesses(t *testing.T) {
	f := newPlayerFixture(t, nil)
	svcs := []*service.Service{f.svc}
	for range 3 {
		s, err := service.New(service.Config{Store: f.store, Players: f.players, Lister: f.store.(service.GameLister), Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(time.Second) })
		svcs = append(svcs, s)
	}
	testRatingsChain(t, f, svcs)
}

func testRatingsChain(t *testing.T, f *playerFixture, svcs []*service.Service) {
	const n = 20
	ctx := t.Context()
	p := f.player(t, "Many")
	pID := f.me(t, p).PlayerID
	games := make([]string, n)
	opponents := make([]service.Caller, n)
	for i := range n {
		opponents[i] = f.player(t, fmt.Sprintf("Opp%02d", i))
		// A spread of opponents' ratings, so that the changes differ.
		f.setRating(t, opponents[i], 900+20*i, 40)
		games[i] = f.ratedGame(t, "intermediate", p, opponents[i])
		for j, m := range []string{"e2e4", "e7e5"} {
			if _, err := f.svc.Act(ctx, games[i], []service.Caller{p, opponents[i]}[j], service.ActionInput{Action: moveUCI(m)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Half won, half lost: the one to move resigns.
			by := p
			if i%2 == 0 {
				by = opponents[i]
			}
			_, errs[i] = svcs[i%len(svcs)].Act(ctx, games[i], by, service.ActionInput{Action: game.Action{Type: game.ActionResign}})
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("game %d's end: %v", i, err)
		}
	}
	rec, err := f.players.Player(ctx, pID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.RatedGames != n || len(rec.RatingHistory) != n {
		t.Fatalf("after %d rated ends: %d rated games, %d history entries", n, rec.RatedGames, len(rec.RatingHistory))
	}
	before := 1000
	seen := map[string]bool{}
	for i, e := range rec.RatingHistory {
		if e.Before != before {
			t.Fatalf("application %d (game %s) starts at %d; the one before ended at %d\nhistory %+v", i, e.GameID, e.Before, before, rec.RatingHistory)
		}
		if seen[e.GameID] {
			t.Fatalf("game %s applied twice", e.GameID)
		}
		seen[e.GameID] = true
		// Each game's stored result carries the same numbers.
		v, err := f.svc.Get(ctx, e.GameID, service.Caller{}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if mv := v.Result.RatingChange.White; mv.Before != e.Before || mv.After != e.After {
			t.Errorf("game %s's result says %+v for the player; the application was %d → %d", e.GameID, mv, e.Before, e.After)
		}
		before = e.After
	}
	if rec.Rating != before {
		t.Errorf("profile %d; the last application ended at %d", rec.Rating, before)
	}
	// The opponents were rated once each, and their games agree.
	for i, o := range opponents {
		op := f.me(t, o)
		v, _ := f.svc.Get(ctx, games[i], service.Caller{}, nil, 0)
		if op.RatedGames != 41 || op.Rating != v.Result.RatingChange.Black.After || v.Result.RatingChange.Black.Before != 900+20*i {
			t.Errorf("opponent %d: %+v; game says %+v", i, op, v.Result.RatingChange.Black)
		}
	}
	// The gameEnded events of the change log carry the settled numbers.
	for _, id := range games {
		log, err := f.svc.Changes(ctx, id, service.Caller{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := f.svc.Get(ctx, id, service.Caller{}, nil, 0)
		for _, c := range log.Changes {
			var evs []game.Event
			if err := json.Unmarshal(c.Events, &evs); err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Type == game.EventGameEnded && (ev.RatingChange == nil || *ev.RatingChange != *v.Result.RatingChange) {
					t.Errorf("game %s's gameEnded event says %+v; the result %+v", id, ev.RatingChange, v.Result.RatingChange)
				}
			}
		}
	}
}
