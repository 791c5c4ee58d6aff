package api

import (
	"context"

	"chessapi/shared/push"
	"chessapi/shared/service"
)

// AccountFollowers answers the service's question of whether a player
// follows their account on the stream ({"action":"subscribe","player":"me"})
// from a transport's registry of subscriptions: the local stream's memory,
// or the data table on AWS. Such a player hears every player event on the
// stream, so the service sends no device notification (SPEC §16.3).
type AccountFollowers struct {
	Subscriptions push.Subscriptions
}

var _ service.AccountFollowers = AccountFollowers{}

// FollowsAccount reports whether any open connection follows playerID's
// account.
func (f AccountFollowers) FollowsAccount(ctx context.Context, playerID string) (bool, error) {
	subs, err := f.Subscriptions.Subscribers(ctx, PlayerTopic(playerID))
	if err != nil {
		return false, err
	}
	return len(subs) > 0, nil
}

// FollowsAccount reports whether a connection of the local stream follows
// playerID's account.
func (s *Stream) FollowsAccount(ctx context.Context, playerID string) (bool, error) {
	return AccountFollowers{Subscriptions: memorySubscriptions{s}}.FollowsAccount(ctx, playerID)
}
