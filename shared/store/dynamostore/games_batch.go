package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

var _ service.GameBatchReader = (*Store)(nil)

// GetGames reads the items of ids with BatchGetItem (100 keys a request;
// eventually consistent, as the index that listed them is: half the read
// units of a strongly consistent read); ids without an item are left out.
// A page of a player's games (at most 100) is one request when nothing is
// throttled.
func (s *Store) GetGames(ctx context.Context, ids []string) (map[string]service.GameRecord, error) {
	keys := make([]map[string]types.AttributeValue, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("dynamostore: get games: %w", errEmptyID)
		}
		if !seen[id] { // BatchGetItem refuses a key twice
			seen[id] = true
			keys = append(keys, map[string]types.AttributeValue{attrGameID: &types.AttributeValueMemberS{Value: id}})
		}
	}
	client, ok := s.client.(batchGetter)
	if !ok { // a client that only reads one item at a time (a test's)
		out := make(map[string]service.GameRecord, len(ids))
		for id := range seen {
			rec, err := s.Get(ctx, id)
			if errors.Is(err, service.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[id] = rec
		}
		return out, nil
	}
	items, err := batchGetItems(ctx, client, s.table, keys, false)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: get %d games: %w", len(ids), err)
	}
	out := make(map[string]service.GameRecord, len(items))
	for _, item := range items {
		rec, err := decodeItem(item)
		if err != nil {
			return nil, err
		}
		out[rec.GameID] = rec
	}
	return out, nil
}
