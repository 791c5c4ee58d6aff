package dynamostore

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

// DecodeStreamImage reads a game item as the table's change stream carries
// it to a Lambda function (a record's NewImage or OldImage).
func DecodeStreamImage(image map[string]events.DynamoDBAttributeValue) (service.GameRecord, error) {
	item := make(map[string]types.AttributeValue, len(image))
	for name, v := range image {
		switch v.DataType() {
		case events.DataTypeString:
			item[name] = &types.AttributeValueMemberS{Value: v.String()}
		case events.DataTypeNumber:
			item[name] = &types.AttributeValueMemberN{Value: v.Number()}
		case events.DataTypeBinary:
			item[name] = &types.AttributeValueMemberB{Value: v.Binary()}
		default:
			return service.GameRecord{}, fmt.Errorf("dynamostore: stream image attribute %s has type %v, which game items never hold", name, v.DataType())
		}
	}
	return DecodeItem(item)
}
