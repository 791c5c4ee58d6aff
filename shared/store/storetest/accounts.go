package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// The accounts part of the players conformance suite (SPEC §16.2):
// sessions, the adoption of tokens issued before sessions, the deletion of
// a player, blocks, and the account fields of the player record.
//
// Besides the contract written on service.Players, it pins down:
//   - Session times are kept to the millisecond in UTC; a session reads
//     back as written, from PlayerByToken and from Sessions.
//   - A revoked session's token resolves to nobody at once, and its other
//     sessions are untouched.
//   - After EndSessions, every session token of the player is a
//     *service.DeletedError naming the player (until the store removes the
//     tombstone, at its time or later); after DeletePlayer nothing of
//     the player reads back (a legacy token that was never adopted may
//     still exist, but names a player that is gone).
//   - Blocks are one way as stored and both ways as Blocked reads them;
//     a player's deletion removes them in both directions.

// legacyTokens is what a store under test offers (in its test build) to
// store a token the way tokens were kept before sessions.
type legacyTokens interface {
	PutLegacyToken(playerID, tokenHash string) error
}

// sessionFor is a fresh session of a player with the token hash.
func sessionFor(playerID, tokenHash string) service.Session {
	at := indexEpoch.Add(time.Duration(len(playerID)) * time.Second).Add(123456 * time.Nanosecond)
	return service.Session{ID: "se_" + newID(), PlayerID: playerID, TokenHash: tokenHash, Label: "폰 (phone)", CreatedAt: at, LastUsedAt: at.Add(time.Minute)}
}

// storedSession is what a read returns for a written session.
func storedSession(s service.Session) service.Session {
	for _, t := range []*time.Time{&s.CreatedAt, &s.LastUsedAt} {
		if !t.IsZero() {
			*t = t.Truncate(time.Millisecond).UTC()
		}
	}
	return s
}

func sessionDiff(got, want service.Session) string {
	want = storedSession(want)
	if got.ID != want.ID || got.PlayerID != want.PlayerID || got.TokenHash != want.TokenHash || got.Label != want.Label ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.LastUsedAt.Equal(want.LastUsedAt) ||
		(!got.CreatedAt.IsZero() && got.CreatedAt.Location() != time.UTC) {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	return ""
}

func runAccounts(t *testing.T, newPlayers func(t *testing.T) service.Players) {
	t.Run("AccountFields", func(t *testing.T) { testAccountFields(t, newPlayers(t)) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, newPlayers(t)) })
	t.Run("SessionTouchAndLabel", func(t *testing.T) { testSessionTouchAndLabel(t, newPlayers(t)) })
	t.Run("RevokeSession", func(t *testing.T) { testRevokeSession(t, newPlayers(t)) })
	t.Run("AdoptLegacyToken", func(t *testing.T) { testAdoptLegacyToken(t, newPlayers(t)) })
	t.Run("DeletePlayer", func(t *testing.T) { testDeletePlayer(t, newPlayers(t)) })
	t.Run("Blocks", func(t *testing.T) { testBlocks(t, newPlayers(t)) })
	t.Run("AccountsEmptyArguments", func(t *testing.T) { testAccountsEmptyArguments(t, newPlayers(t)) })
}

func testAccountFields(t *testing.T, ps service.Players) {
	p := newPlayer()
	p.RecoveryHash = newHash("recovery")
	p.RatingHistory = []service.RatingEntry{
		{GameID: "g1", At: indexEpoch.Add(time.Hour + 999*time.Microsecond), Before: 1000, After: 1020},
		{GameID: "g#2", At: indexEpoch.Add(2 * time.Hour), Before: 1020, After: 1001},
	}
	p = mustCreatePlayer(t, ps, p, newHash("token"))
	mustPlayer(t, ps, p)
	next := p
	next.Version = 2
	next.RecoveryHash = newHash("recovery")
	next.RatingHistory = append(slices.Clone(p.RatingHistory), service.RatingEntry{GameID: "g3", At: indexEpoch.Add(3 * time.Hour), Before: 1001, After: 1041})
	if err := ps.UpdatePlayer(ctxFor(t), next, 1); err != nil {
		t.Fatal(err)
	}
	mustPlayer(t, ps, next)
}

func testSessions(t *testing.T, ps service.Players) {
	p := newPlayer()
	first := sessionFor(p.ID, newHash("token"))
	if err := ps.CreatePlayer(ctxFor(t), p, first); err != nil {
		t.Fatal(err)
	}
	got, sess, err := ps.PlayerByToken(ctxFor(t), first.TokenHash)
	if err != nil || got.ID != p.ID || sessionDiff(sess, first) != "" {
		t.Fatalf("PlayerByToken = %s, %v; want the first session", sessionDiff(sess, first), err)
	}
	second := sessionFor(p.ID, newHash("token"))
	second.CreatedAt = first.CreatedAt.Add(time.Hour)
	second.Label = ""
	third := sessionFor(p.ID, newHash("token"))
	third.CreatedAt, third.ID = second.CreatedAt, "se_0"+newID() // a tie: by id
	for _, s := range []service.Session{second, third} {
		if err := ps.AddSession(ctxFor(t), s); err != nil {
			t.Fatal(err)
		}
	}
	if err := ps.AddSession(ctxFor(t), sessionFor(p.ID, second.TokenHash)); !errors.Is(err, service.ErrAlreadyExists) {
		t.Errorf("AddSession with a taken token hash = %v; want ErrAlreadyExists", err)
	}
	again := sessionFor(p.ID, newHash("token"))
	again.ID = second.ID
	if err := ps.AddSession(ctxFor(t), again); !errors.Is(err, service.ErrAlreadyExists) {
		t.Errorf("AddSession with a taken session id = %v; want ErrAlreadyExists", err)
	}
	if _, _, err := ps.PlayerByToken(ctxFor(t), again.TokenHash); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("the token of the refused session resolves: %v", err)
	}
	want := []service.Session{first, second, third}
	if third.ID < second.ID {
		want = []service.Session{first, third, second}
	}
	list, err := ps.Sessions(ctxFor(t), p.ID)
	if err != nil || len(list) != len(want) {
		t.Fatalf("Sessions = %+v, %v; want %d", list, err, len(want))
	}
	for i := range want {
		if d := sessionDiff(list[i], want[i]); d != "" {
			t.Errorf("Sessions[%d] = %s", i, d)
		}
	}
	if list, err := ps.Sessions(ctxFor(t), newPlayerID("nobody")); err != nil || len(list) != 0 {
		t.Errorf("Sessions(unknown) = %v, %v; want none", list, err)
	}
}

func testSessionTouchAndLabel(t *testing.T, ps service.Players) {
	p := newPlayer()
	sess := sessionFor(p.ID, newHash("token"))
	if err := ps.CreatePlayer(ctxFor(t), p, sess); err != nil {
		t.Fatal(err)
	}
	read := func() service.Session {
		t.Helper()
		_, s, err := ps.PlayerByToken(ctxFor(t), sess.TokenHash)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	later := sess.LastUsedAt.Add(time.Hour + 500*time.Microsecond)
	if err := ps.TouchSession(ctxFor(t), sess, later); err != nil {
		t.Fatal(err)
	}
	if got := read(); !got.LastUsedAt.Equal(later.Truncate(time.Millisecond)) {
		t.Errorf("LastUsedAt after a touch = %v; want %v", got.LastUsedAt, later)
	}
	if err := ps.TouchSession(ctxFor(t), sess, sess.LastUsedAt); err != nil {
		t.Errorf("an earlier touch = %v; want nil (and no change)", err)
	}
	if got := read(); !got.LastUsedAt.Equal(later.Truncate(time.Millisecond)) {
		t.Errorf("an earlier touch moved LastUsedAt back to %v", got.LastUsedAt)
	}
	for _, label := range []string{"새 라벨", ""} {
		if err := ps.LabelSession(ctxFor(t), sess, label); err != nil {
			t.Fatal(err)
		}
		if got := read(); got.Label != label {
			t.Errorf("Label = %q; want %q", got.Label, label)
		}
	}
	list, err := ps.Sessions(ctxFor(t), p.ID)
	if err != nil || len(list) != 1 || !list[0].LastUsedAt.Equal(later.Truncate(time.Millisecond)) || list[0].Label != "" {
		t.Errorf("Sessions after touch and label = %+v, %v", list, err)
	}
	stranger := sess
	stranger.ID = "se_" + newID()
	if err := ps.TouchSession(ctxFor(t), stranger, later.Add(time.Hour)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("TouchSession of another session id = %v; want ErrNotFound", err)
	}
	if err := ps.LabelSession(ctxFor(t), sessionFor(p.ID, newHash("token")), "x"); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("LabelSession of an unknown session = %v; want ErrNotFound", err)
	}
}

func testRevokeSession(t *testing.T, ps service.Players) {
	p := newPlayer()
	keep, drop := sessionFor(p.ID, newHash("token")), sessionFor(p.ID, newHash("token"))
	if err := ps.CreatePlayer(ctxFor(t), p, keep); err != nil {
		t.Fatal(err)
	}
	if err := ps.AddSession(ctxFor(t), drop); err != nil {
		t.Fatal(err)
	}
	got, err := ps.DeleteSession(ctxFor(t), p.ID, drop.ID)
	if err != nil || sessionDiff(got, drop) != "" {
		t.Fatalf("DeleteSession = %+v, %v; want the session as it was", got, err)
	}
	if _, _, err := ps.PlayerByToken(ctxFor(t), drop.TokenHash); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("the revoked token: %v; want ErrNotFound", err)
	}
	if _, err := ps.DeleteSession(ctxFor(t), p.ID, drop.ID); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("a second DeleteSession = %v; want ErrNotFound", err)
	}
	if err := ps.TouchSession(ctxFor(t), drop, time.Now()); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("TouchSession of a revoked session = %v; want ErrNotFound", err)
	}
	if list, err := ps.Sessions(ctxFor(t), p.ID); err != nil || len(list) != 1 || list[0].ID != keep.ID {
		t.Errorf("Sessions after the revocation = %+v, %v; want the kept one", list, err)
	}
	if _, _, err := ps.PlayerByToken(ctxFor(t), keep.TokenHash); err != nil {
		t.Errorf("the other session's token: %v", err)
	}
	// Another player cannot revoke it.
	other := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	if _, err := ps.DeleteSession(ctxFor(t), other.ID, keep.ID); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("DeleteSession by another player = %v; want ErrNotFound", err)
	}
	if _, _, err := ps.PlayerByToken(ctxFor(t), keep.TokenHash); err != nil {
		t.Errorf("the session survives another player's revocation? %v", err)
	}
}

func testAdoptLegacyToken(t *testing.T, ps service.Players) {
	lt, ok := ps.(legacyTokens)
	if !ok {
		t.Skip("the store keeps no tokens from before sessions")
	}
	p := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	hash := newHash("legacy")
	if err := lt.PutLegacyToken(p.ID, hash); err != nil {
		t.Fatal(err)
	}
	got, sess, err := ps.PlayerByToken(ctxFor(t), hash)
	if err != nil || got.ID != p.ID || sess.ID != "" || sess.PlayerID != p.ID || sess.TokenHash != hash {
		t.Fatalf("PlayerByToken(legacy) = %+v, %+v, %v; want the player and a session without an id", got, sess, err)
	}
	adopted := sessionFor(p.ID, hash)
	adopted.Label = ""
	// Concurrent adoptions of the same token with the same session agree.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	results := make([]service.Session, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = ps.AdoptToken(ctxFor(t), adopted)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || sessionDiff(results[i], adopted) != "" {
			t.Fatalf("AdoptToken #%d = %+v, %v; want the session", i, results[i], err)
		}
	}
	if _, sess, err := ps.PlayerByToken(ctxFor(t), hash); err != nil || sessionDiff(sess, adopted) != "" {
		t.Fatalf("PlayerByToken after the adoption = %+v, %v", sess, err)
	}
	// Adopting it as another session afterwards keeps the first.
	late := sessionFor(p.ID, hash)
	if got, err := ps.AdoptToken(ctxFor(t), late); err != nil || got.ID != adopted.ID {
		t.Errorf("a later adoption = %+v, %v; want the adopted session %s", got, err, adopted.ID)
	}
	list, err := ps.Sessions(ctxFor(t), p.ID)
	if err != nil || len(list) != 2 || !slices.ContainsFunc(list, func(s service.Session) bool { return s.ID == adopted.ID }) ||
		slices.ContainsFunc(list, func(s service.Session) bool { return s.ID == late.ID }) {
		t.Errorf("Sessions after the adoption = %+v, %v; want the first session and the adopted one", list, err)
	}
	if _, err := ps.AdoptToken(ctxFor(t), sessionFor(p.ID, newHash("unknown"))); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("AdoptToken of an unknown token = %v; want ErrNotFound", err)
	}
	other := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	stolen := newHash("legacy")
	if err := lt.PutLegacyToken(p.ID, stolen); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.AdoptToken(ctxFor(t), sessionFor(other.ID, stolen)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("AdoptToken of another player's token = %v; want ErrNotFound", err)
	}
	if got, _, err := ps.PlayerByToken(ctxFor(t), stolen); err != nil || got.ID != p.ID {
		t.Errorf("the token after a refused adoption = %+v, %v; want still %s", got, err, p.ID)
	}
}

func testDeletePlayer(t *testing.T, ps service.Players) {
	ctx := ctxFor(t)
	p := newPlayer()
	a, b := sessionFor(p.ID, newHash("token")), sessionFor(p.ID, newHash("token"))
	if err := ps.CreatePlayer(ctx, p, a); err != nil {
		t.Fatal(err)
	}
	if err := ps.AddSession(ctx, b); err != nil {
		t.Fatal(err)
	}
	friend := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	foe := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	at := time.Now().Truncate(time.Millisecond)
	for _, blk := range [][2]string{{p.ID, foe.ID}, {friend.ID, p.ID}, {friend.ID, foe.ID}} {
		if err := ps.Block(ctx, blk[0], blk[1], at); err != nil {
			t.Fatal(err)
		}
	}
	code := newHash("link")
	if err := ps.PutLinkCode(ctx, code, p.ID, time.Now().Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}

	ended, err := ps.EndSessions(ctx, p.ID, time.Now().Add(time.Hour))
	if err != nil || len(ended) != 2 {
		t.Fatalf("EndSessions = %+v, %v; want both sessions", ended, err)
	}
	for _, s := range []service.Session{a, b} {
		if !slices.ContainsFunc(ended, func(e service.Session) bool { return e.ID == s.ID && e.TokenHash == s.TokenHash && e.PlayerID == p.ID }) {
			t.Errorf("EndSessions did not report %s", s.ID)
		}
		var deleted *service.DeletedError
		if _, _, err := ps.PlayerByToken(ctx, s.TokenHash); !errors.As(err, &deleted) || deleted.PlayerID != p.ID {
			t.Errorf("a token after EndSessions: %v; want DeletedError for %s", err, p.ID)
		}
	}
	if again, err := ps.EndSessions(ctx, p.ID, time.Now().Add(time.Hour)); err != nil || len(again) != 0 {
		t.Errorf("a second EndSessions = %+v, %v; want nothing left", again, err)
	}
	if list, err := ps.Sessions(ctx, p.ID); err != nil || len(list) != 0 {
		t.Errorf("Sessions after EndSessions = %+v, %v; want none", list, err)
	}

	if err := ps.DeletePlayer(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Player(ctx, p.ID); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("Player after DeletePlayer = %v; want ErrNotFound", err)
	}
	for _, pair := range [][2]string{{p.ID, foe.ID}, {friend.ID, p.ID}} {
		if blocked, err := ps.Blocked(ctx, pair[0], pair[1]); err != nil || blocked {
			t.Errorf("Blocked(%s, %s) after the deletion = %v, %v; want false", pair[0], pair[1], blocked, err)
		}
	}
	if list, err := ps.Blocks(ctx, friend.ID); err != nil || len(list) != 1 || list[0].PlayerID != foe.ID {
		t.Errorf("the friend's blocks after the deletion = %+v, %v; want only the foe", list, err)
	}
	if list, err := ps.Blocks(ctx, p.ID); err != nil || len(list) != 0 {
		t.Errorf("the deleted player's blocks = %+v, %v; want none", list, err)
	}
	if id, err := ps.ClaimLinkCode(ctx, code, time.Now()); err == nil {
		if _, err := ps.Player(ctx, id); !errors.Is(err, service.ErrNotFound) {
			t.Errorf("the deleted player's link code names %s, who reads back: %v", id, err)
		}
	} else if !errors.Is(err, service.ErrNotFound) {
		t.Errorf("ClaimLinkCode of the deleted player's code = %v", err)
	}
	for _, s := range []service.Session{a, b} {
		var deleted *service.DeletedError
		if _, _, err := ps.PlayerByToken(ctx, s.TokenHash); !errors.As(err, &deleted) {
			t.Errorf("a token after DeletePlayer: %v; want the tombstone until its time", err)
		}
	}
	if err := ps.DeletePlayer(ctx, p.ID); err != nil {
		t.Errorf("a second DeletePlayer = %v; want nil", err)
	}
	if err := ps.DeletePlayer(ctx, newPlayerID("nobody")); err != nil {
		t.Errorf("DeletePlayer of nobody = %v; want nil", err)
	}

	// A token from before sessions, never adopted: after the deletion it
	// authenticates nobody.
	if lt, ok := ps.(legacyTokens); ok {
		r := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
		legacy := newHash("legacy")
		if err := lt.PutLegacyToken(r.ID, legacy); err != nil {
			t.Fatal(err)
		}
		if _, err := ps.EndSessions(ctx, r.ID, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := ps.DeletePlayer(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		var deleted *service.DeletedError
		if got, _, err := ps.PlayerByToken(ctx, legacy); !errors.Is(err, service.ErrNotFound) && !errors.As(err, &deleted) {
			t.Errorf("a legacy token after the deletion = %+v, %v; want nobody", got, err)
		}
	}
}

func testBlocks(t *testing.T, ps service.Players) {
	ctx := ctxFor(t)
	a := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	b := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	c := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	t0 := indexEpoch.Add(500 * time.Microsecond)
	if err := ps.Block(ctx, a.ID, b.ID, t0); err != nil {
		t.Fatal(err)
	}
	if err := ps.Block(ctx, a.ID, c.ID, t0.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := ps.Block(ctx, a.ID, b.ID, t0.Add(time.Hour)); err != nil {
		t.Errorf("blocking again = %v; want nil", err)
	}
	for _, pair := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}, {a.ID, c.ID}, {c.ID, a.ID}} {
		if blocked, err := ps.Blocked(ctx, pair[0], pair[1]); err != nil || !blocked {
			t.Errorf("Blocked(%s, %s) = %v, %v; want true (either way)", pair[0], pair[1], blocked, err)
		}
	}
	if blocked, err := ps.Blocked(ctx, b.ID, c.ID); err != nil || blocked {
		t.Errorf("Blocked(b, c) = %v, %v; want false", blocked, err)
	}
	list, err := ps.Blocks(ctx, a.ID)
	want := []service.Block{{PlayerID: c.ID, CreatedAt: t0.Add(-time.Second).Truncate(time.Millisecond).UTC()}, {PlayerID: b.ID, CreatedAt: t0.Truncate(time.Millisecond).UTC()}}
	if err != nil || len(list) != 2 || list[0].PlayerID != want[0].PlayerID || !list[0].CreatedAt.Equal(want[0].CreatedAt) ||
		list[1].PlayerID != want[1].PlayerID || !list[1].CreatedAt.Equal(want[1].CreatedAt) {
		t.Fatalf("Blocks(a) = %+v, %v; want %+v (oldest first, the first time kept)", list, err, want)
	}
	if list, err := ps.Blocks(ctx, b.ID); err != nil || len(list) != 0 {
		t.Errorf("Blocks(b) = %+v, %v; want none (blocks are one way as stored)", list, err)
	}
	if err := ps.Unblock(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if blocked, err := ps.Blocked(ctx, b.ID, a.ID); err != nil || blocked {
		t.Errorf("Blocked after Unblock = %v, %v; want false", blocked, err)
	}
	if err := ps.Unblock(ctx, a.ID, b.ID); err != nil {
		t.Errorf("Unblock of no block = %v; want nil", err)
	}
	if err := ps.Block(ctx, a.ID, a.ID, t0); err == nil {
		t.Error("a player blocked itself")
	}
}

func testAccountsEmptyArguments(t *testing.T, ps service.Players) {
	ctx := ctxFor(t)
	now := time.Now()
	noHash := sessionFor("someone", "")
	checks := map[string]error{
		"AddSession(empty hash)":  ps.AddSession(ctx, noHash),
		"TouchSession(empty)":     ps.TouchSession(ctx, service.Session{}, now),
		"LabelSession(empty)":     ps.LabelSession(ctx, service.Session{}, "x"),
		"DeletePlayer(empty)":     ps.DeletePlayer(ctx, ""),
		"Block(empty)":            ps.Block(ctx, "", "b", now),
		"Block(zero time)":        ps.Block(ctx, "a", "b", time.Time{}),
		"Unblock(empty)":          ps.Unblock(ctx, "a", ""),
		"CreatePlayer(other's)":   ps.CreatePlayer(ctx, newPlayer(), sessionFor("someone-else", newHash("token"))),
		"CreatePlayer(no id)":     ps.CreatePlayer(ctx, newPlayer(), service.Session{TokenHash: newHash("token")}),
		"EndSessions(zero until)": func() error { _, err := ps.EndSessions(ctx, "a", time.Time{}); return err }(),
	}
	_, checks["AdoptToken(empty)"] = ps.AdoptToken(ctx, service.Session{})
	_, checks["Sessions(empty)"] = ps.Sessions(ctx, "")
	_, checks["DeleteSession(empty)"] = ps.DeleteSession(ctx, "a", "")
	_, checks["EndSessions(empty)"] = ps.EndSessions(ctx, "", now)
	_, checks["Blocks(empty)"] = ps.Blocks(ctx, "")
	_, checks["Blocked(empty)"] = ps.Blocked(ctx, "a", "")
	for name, err := range checks {
		if err == nil || errors.Is(err, service.ErrNotFound) {
			t.Errorf("%s = %v; want a validation error", name, err)
		}
	}
}
