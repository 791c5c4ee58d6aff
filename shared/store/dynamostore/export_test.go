package dynamostore

import "context"

// PutLegacyToken stores a token the way the data table kept them before
// sessions (a token item with the player id only), for the conformance
// suite's adoption tests.
func (d *Data) PutLegacyToken(playerID, tokenHash string) error {
	item := tokenKey(tokenHash)
	item[attrPlayerID] = s(playerID)
	return d.put(context.Background(), item, "", nil, nil)
}
