package dynamostore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// The game index lives on the game's own item, so it is written by the
// same PutItem as the record and can never disagree with a committed
// version; three sparse global secondary indexes answer the queries:
//
//	idxW        S  "<white player>#a" or "#f" (active, finished)   byWhite's partition key
//	idxB        S  the same for the black seat                     byBlack's partition key
//	idxUpdated  S  rules.SortKey(listedAt, gameId)                 byWhite's and byBlack's sort key
//	idxLobby    S  the room whose lobby lists the game              lobby's partition key
//	idxCreated  S  rules.SortKey(createdAt, gameId)                lobby's sort key
//	createdAt   N  epoch milliseconds                               projected
//	listedAt    N  epoch milliseconds (GameIndex.ListedAt)
//	writtenAt   N  epoch milliseconds (GameIndex.UpdatedAt)
//	finished    N  1 when the game is finished (absent otherwise)
//	summary     B  the service's summary (absent when empty)       projected
//
// idxW, idxB and idxUpdated are written only for a seat with a player,
// idxLobby and idxCreated only while the game is listed, the rest whenever
// the record has an index: an item enters an index only with both of its
// keys, so each index holds just the games it lists. The indexes project
// the table key, their own keys, createdAt and summary — what an
// IndexEntry needs — and updatedAt (below), never the state.
//
// Everything an index holds of an item is the same between two versions
// unless the game started, ended or changed players (ListedAt, the status,
// the summary change only then), so DynamoDB writes no index entry for a
// move: an update that changes neither an index's keys nor an attribute it
// projects costs that index nothing (docs/storage.md). That is why the
// time of the write is writtenAt, which no index projects. Items written
// before issue 22 hold it as updatedAt instead, which the indexes project
// and which is read when writtenAt is absent; their sort key then held
// updatedAt, read back as their ListedAt, so the service keeps their place
// in the lists (service.GameIndex.ListedAt) and their next write only
// drops updatedAt (one update of each entry, once). The attribute keeps
// the name idxUpdated, and updatedAt its place in the projection, because
// DynamoDB cannot change an existing index's key schema or projection
// (UpdateTable's GlobalSecondaryIndexUpdate updates only throughput):
// renaming would mean new indexes.
const (
	attrIdxWhite   = "idxW"
	attrIdxBlack   = "idxB"
	attrIdxLobby   = "idxLobby"
	attrIdxUpdated = "idxUpdated"
	attrIdxCreated = "idxCreated"
	attrCreatedAt  = "createdAt"
	attrListedAt   = "listedAt"
	attrWrittenAt  = "writtenAt"
	// attrUpdatedAt is the time of the write on items written before
	// writtenAt (projected by the indexes, so no longer written).
	attrUpdatedAt = "updatedAt"
	attrFinished  = "finished"
	attrSummary   = "summary"
)

// The games table's global secondary indexes.
const (
	IndexByWhite = "byWhite"
	IndexByBlack = "byBlack"
	IndexLobby   = "lobby"
)

// GamesIndex describes one global secondary index of the games table (all
// its key attributes are strings). CreateTable creates these, and the SAM
// template's GamesTable must declare the same (deploy/index_template_test.go).
type GamesIndex struct {
	Name         string
	PartitionKey string
	SortKey      string
	// NonKeyAttributes are projected besides the keys (ProjectionType
	// INCLUDE).
	NonKeyAttributes []string
}

// GamesIndexes are the games table's global secondary indexes.
func GamesIndexes() []GamesIndex {
	projected := func() []string { return []string{attrCreatedAt, attrUpdatedAt, attrSummary} }
	return []GamesIndex{
		{Name: IndexByWhite, PartitionKey: attrIdxWhite, SortKey: attrIdxUpdated, NonKeyAttributes: projected()},
		{Name: IndexByBlack, PartitionKey: attrIdxBlack, SortKey: attrIdxUpdated, NonKeyAttributes: projected()},
		{Name: IndexLobby, PartitionKey: attrIdxLobby, SortKey: attrIdxCreated, NonKeyAttributes: projected()},
	}
}

// GamesTableAttributes are the attributes the games table declares (its
// key and the indexes' keys), all of type S, in the order CreateTable
// declares them.
func GamesTableAttributes() []string {
	return []string{attrGameID, attrIdxWhite, attrIdxBlack, attrIdxLobby, attrIdxUpdated, attrIdxCreated}
}

// playerPartition is a player's index partition for a status.
func playerPartition(player string, finished bool) string {
	return player + "#" + string(rules.Status(finished))
}

// encodeIndex adds the attributes of ix (valid per rules.ValidateIndex)
// to a game's item.
func encodeIndex(item map[string]types.AttributeValue, gameID string, ix service.GameIndex) {
	if rules.IsZero(ix) {
		return
	}
	item[attrCreatedAt] = number(ix.CreatedAt.UnixMilli())
	item[attrListedAt] = number(ix.ListedAt.UnixMilli())
	item[attrWrittenAt] = number(ix.UpdatedAt.UnixMilli())
	if ix.Finished {
		item[attrFinished] = number(1)
	}
	if len(ix.Summary) > 0 {
		item[attrSummary] = &types.AttributeValueMemberB{Value: ix.Summary}
	}
	if ix.Players[0] != "" {
		item[attrIdxWhite] = &types.AttributeValueMemberS{Value: playerPartition(ix.Players[0], ix.Finished)}
	}
	if ix.Players[1] != "" {
		item[attrIdxBlack] = &types.AttributeValueMemberS{Value: playerPartition(ix.Players[1], ix.Finished)}
	}
	if ix.Players[0] != "" || ix.Players[1] != "" {
		item[attrIdxUpdated] = &types.AttributeValueMemberS{Value: rules.SortKey(ix.ListedAt, gameID)}
	}
	if ix.LobbyRoom != "" {
		item[attrIdxLobby] = &types.AttributeValueMemberS{Value: ix.LobbyRoom}
		item[attrIdxCreated] = &types.AttributeValueMemberS{Value: rules.SortKey(ix.CreatedAt, gameID)}
	}
}

// decodeIndex reads a game item's index back (the zero index when the
// item has none). The sort keys are derived data and not read, but for
// the ListedAt of an item written before listedAt existed (its sort key's
// time, or its updatedAt when it had none).
func decodeIndex(item map[string]types.AttributeValue) (service.GameIndex, error) {
	var ix service.GameIndex
	fail := func(attr, reason string) (service.GameIndex, error) {
		return service.GameIndex{}, &ItemError{Attribute: attr, Reason: reason}
	}
	times := map[string]int64{}
	for _, attr := range []string{attrCreatedAt, attrListedAt, attrWrittenAt, attrUpdatedAt} {
		ms, present, err := intAttr(item, attr)
		if err != nil {
			return fail(attr, err.Error())
		}
		if !present {
			continue
		}
		if ms < 0 || ms >= 1e13 {
			return fail(attr, fmt.Sprintf("%d is outside the index's range", ms))
		}
		times[attr] = ms
	}
	if len(times) == 0 {
		for _, attr := range []string{attrFinished, attrSummary, attrIdxWhite, attrIdxBlack, attrIdxLobby} {
			if _, found := item[attr]; found {
				return fail(attr, "present without createdAt and writtenAt")
			}
		}
		return ix, nil
	}
	created, ok := times[attrCreatedAt]
	if !ok {
		return fail(attrCreatedAt, "missing")
	}
	written, ok := times[attrWrittenAt]
	if !ok {
		if written, ok = times[attrUpdatedAt]; !ok { // written before writtenAt
			return fail(attrWrittenAt, "missing")
		}
	}
	listed, ok := times[attrListedAt]
	if !ok { // written before listedAt: what its sort key was made of
		listed = written
		if v, found := item[attrIdxUpdated]; found {
			sk, isString := v.(*types.AttributeValueMemberS)
			if !isString {
				return fail(attrIdxUpdated, "not a string")
			}
			ms, _, err := rules.ParseSortKey(sk.Value)
			if err != nil {
				return fail(attrIdxUpdated, err.Error())
			}
			listed = ms
		}
	}
	ix.CreatedAt, ix.UpdatedAt, ix.ListedAt = rules.Millis(created), rules.Millis(written), rules.Millis(listed)
	finished, present, err := intAttr(item, attrFinished)
	switch {
	case err != nil:
		return fail(attrFinished, err.Error())
	case present && finished != 1:
		return fail(attrFinished, fmt.Sprintf("%d is not 1", finished))
	}
	ix.Finished = present
	if v, found := item[attrSummary]; found {
		b, ok := v.(*types.AttributeValueMemberB)
		if !ok {
			return fail(attrSummary, "not binary")
		}
		if len(b.Value) > 0 {
			ix.Summary = b.Value
		}
	}
	for i, attr := range []string{attrIdxWhite, attrIdxBlack} {
		v, found := item[attr]
		if !found {
			continue
		}
		p, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return fail(attr, "not a string")
		}
		// A player id may hold '#': the status follows the last one.
		cut := strings.LastIndexByte(p.Value, '#')
		if cut < 1 || p.Value[cut+1:] != string(rules.Status(ix.Finished)) {
			return fail(attr, fmt.Sprintf("%q is not <player>#%c", p.Value, rules.Status(ix.Finished)))
		}
		ix.Players[i] = p.Value[:cut]
	}
	if v, found := item[attrIdxLobby]; found {
		room, ok := v.(*types.AttributeValueMemberS)
		if !ok || room.Value == "" {
			return fail(attrIdxLobby, "not a non-empty string")
		}
		ix.LobbyRoom = room.Value
	}
	return ix, nil
}

var _ service.GameLister = (*Store)(nil)

// indexedEntry is an entry with the sort key it was found under.
type indexedEntry struct {
	service.IndexEntry
	sortKey string
}

// PlayerGames lists playerID's finished or active games, newest ListedAt
// first (ties: greater game id first), at most limit, after cursor. It
// queries byWhite and byBlack (limit+1 each, newest first, strictly after
// the cursor's sort key) and merges them: a game's sort key is the same on
// both, so the merged order is total and a game on both seats comes once.
func (s *Store) PlayerGames(ctx context.Context, playerID string, finished bool, limit int, cursor string) ([]service.IndexEntry, string, error) {
	entries, next, err := s.playerGames(ctx, playerID, finished, limit, cursor)
	if err != nil {
		return nil, "", fmt.Errorf("dynamostore: games of player %q: %w", playerID, err)
	}
	return entries, next, nil
}

func (s *Store) playerGames(ctx context.Context, playerID string, finished bool, limit int, cursor string) ([]service.IndexEntry, string, error) {
	if err := rules.ValidateQuery("player id", playerID, limit); err != nil {
		return nil, "", err
	}
	after, err := decodeCursor(rules.CursorPlayerGames, cursor)
	if err != nil {
		return nil, "", err
	}
	partition := playerPartition(playerID, finished)
	var merged []indexedEntry
	for _, idx := range []struct{ name, pk string }{{IndexByWhite, attrIdxWhite}, {IndexByBlack, attrIdxBlack}} {
		found, err := s.queryIndex(ctx, idx.name, idx.pk, partition, attrIdxUpdated, after, true, limit+1)
		if err != nil {
			return nil, "", err
		}
		merged = append(merged, found...)
	}
	// Newest first. A game on both seats is found twice; while the two
	// indexes trail a write differently (a start) its two sort keys may
	// differ, and the newer one is kept.
	slices.SortFunc(merged, func(a, b indexedEntry) int { return strings.Compare(b.sortKey, a.sortKey) })
	seen := make(map[string]bool, len(merged))
	out := merged[:0]
	for _, e := range merged {
		if seen[e.GameID] {
			continue
		}
		seen[e.GameID] = true
		out = append(out, e)
	}
	return page(out, limit, rules.CursorPlayerGames)
}

// Lobby lists the games listed in room, oldest CreatedAt first (ties:
// smaller game id first), at most limit, after cursor: one query of the
// lobby index.
func (s *Store) Lobby(ctx context.Context, room string, limit int, cursor string) ([]service.IndexEntry, string, error) {
	entries, next, err := s.lobby(ctx, room, limit, cursor)
	if err != nil {
		return nil, "", fmt.Errorf("dynamostore: lobby %q: %w", room, err)
	}
	return entries, next, nil
}

func (s *Store) lobby(ctx context.Context, room string, limit int, cursor string) ([]service.IndexEntry, string, error) {
	if err := rules.ValidateQuery("room", room, limit); err != nil {
		return nil, "", err
	}
	after, err := decodeCursor(rules.CursorLobby, cursor)
	if err != nil {
		return nil, "", err
	}
	found, err := s.queryIndex(ctx, IndexLobby, attrIdxLobby, room, attrIdxCreated, after, false, limit+1)
	if err != nil {
		return nil, "", err
	}
	return page(found, limit, rules.CursorLobby)
}

func decodeCursor(kind byte, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	return rules.DecodeCursor(kind, cursor)
}

// page cuts sorted entries to limit, with the cursor of the last one kept
// when more follow.
func page(entries []indexedEntry, limit int, kind byte) ([]service.IndexEntry, string, error) {
	var next string
	if len(entries) > limit {
		entries = entries[:limit]
		next = rules.EncodeCursor(kind, entries[limit-1].sortKey)
	}
	out := make([]service.IndexEntry, len(entries))
	for i, e := range entries {
		out[i] = e.IndexEntry
	}
	return out, next, nil
}

// queryIndex reads up to n entries of one partition of a games index, in
// sort key order (descending: greatest first), strictly after the sort
// key after ("" from the start). A response cut short by DynamoDB's page
// size is continued.
func (s *Store) queryIndex(ctx context.Context, index, pkAttr, pk, skAttr, after string, descending bool, n int) ([]indexedEntry, error) {
	cond := "#pk = :pk"
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}}
	if after != "" {
		op := ">"
		if descending {
			op = "<"
		}
		cond += " AND #sk " + op + " :after"
		values[":after"] = &types.AttributeValueMemberS{Value: after}
	}
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		IndexName:              aws.String(index),
		KeyConditionExpression: aws.String(cond),
		// Name what an entry needs, so a projection widened by someone to
		// ALL still does not ship the states.
		ProjectionExpression: aws.String("#id, #sk, #c, #sum"),
		ExpressionAttributeNames: map[string]string{
			"#pk": pkAttr, "#sk": skAttr, "#id": attrGameID, "#c": attrCreatedAt, "#sum": attrSummary,
		},
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!descending),
	}
	var out []indexedEntry
	for len(out) < n {
		in.Limit = aws.Int32(int32(n - len(out)))
		res, err := s.client.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", index, err)
		}
		for _, item := range res.Items {
			e, err := decodeEntry(item, skAttr)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", index, err)
			}
			out = append(out, e)
		}
		if len(res.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
	return out, nil
}

// decodeEntry reads one item of a games index.
func decodeEntry(item map[string]types.AttributeValue, skAttr string) (indexedEntry, error) {
	var e indexedEntry
	id, ok := item[attrGameID].(*types.AttributeValueMemberS)
	if !ok {
		return e, &ItemError{Attribute: attrGameID, Reason: "missing or not a string in an index entry"}
	}
	e.GameID = id.Value
	sk, ok := item[skAttr].(*types.AttributeValueMemberS)
	if !ok {
		return e, &ItemError{GameID: e.GameID, Attribute: skAttr, Reason: "missing or not a string in an index entry"}
	}
	e.sortKey = sk.Value
	sorted, _, err := rules.ParseSortKey(sk.Value)
	if err != nil {
		return e, &ItemError{GameID: e.GameID, Attribute: skAttr, Reason: err.Error()}
	}
	created, present, err := intAttr(item, attrCreatedAt)
	if err == nil && (!present || created < 0 || created >= 1e13) {
		err = fmt.Errorf("missing or out of range in an index entry")
	}
	if err != nil {
		return e, &ItemError{GameID: e.GameID, Attribute: attrCreatedAt, Reason: err.Error()}
	}
	e.CreatedAt, e.SortedAt = rules.Millis(created), rules.Millis(sorted)
	if v, found := item[attrSummary]; found {
		b, ok := v.(*types.AttributeValueMemberB)
		if !ok {
			return e, &ItemError{GameID: e.GameID, Attribute: attrSummary, Reason: "not binary"}
		}
		if len(b.Value) > 0 {
			e.Summary = b.Value
		}
	}
	return e, nil
}
