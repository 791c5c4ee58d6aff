package api

import (
	"context"

	"github.com/coder/websocket"

	"chessapi/shared/service"
)

// Sessions that end (revoked, or their player deleted: SPEC §16.2) close
// the local stream's connections made with their tokens, at once: the
// client sees the close (policy violation, "session ended") and its token
// is refused if it reconnects. On AWS the stream's connection records of
// those tokens are deleted instead (lambdafn), which stops the fan-out.

// sessionEndedReason is the close reason a connection of an ended session
// gets.
const sessionEndedReason = "session ended"

// CloseSessions closes every open connection made with the token of one
// of the ended sessions; it is a service.SessionsEnded.
func (s *Stream) CloseSessions(_ context.Context, ended []service.Session) error {
	hashes := make(map[string]bool, len(ended))
	for _, sess := range ended {
		hashes[sess.TokenHash] = true
	}
	s.mu.Lock()
	var closing []*streamConn
	for _, c := range s.conns {
		if h := c.info.tokenHash(); h != "" && hashes[h] {
			closing = append(closing, c)
		}
	}
	s.mu.Unlock()
	for _, c := range closing {
		c.shutdown(websocket.StatusPolicyViolation, sessionEndedReason)
	}
	return nil
}
