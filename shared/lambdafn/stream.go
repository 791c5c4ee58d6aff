package lambdafn

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/api"
	"chessapi/shared/obs"
	"chessapi/shared/push"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// The stream on AWS: the WebSocket API's routes (the stream function) and
// the games table's change stream (the fan-out function). shared/push does
// the work; these handlers take the events as Lambda delivers them.

// HandleWebSocket serves the WebSocket API's routes: $connect (a
// malformed token refuses the connection: a non-2xx answer),
// $disconnect, and every client message (routes subscribe, unsubscribe,
// ping and $default), answered by posts to the connection. An error
// result means the work could not be done (Lambda logs it; API Gateway
// tells the client "internal server error").
func (a *App) HandleWebSocket(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	hub, err := a.streamHub(ev.RequestContext)
	if err != nil {
		a.log.Error("stream: no hub", "err", err)
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}, err
	}
	rc := ev.RequestContext
	ctx = a.withRequest(ctx, rc.RequestID, rc.RouteKey, "")
	log := obs.Logger(ctx).With("connection", rc.ConnectionID)
	start := time.Now()
	switch rc.RouteKey {
	case "$connect":
		err := hub.Connect(ctx, push.ConnectRequest{
			ConnID:         rc.ConnectionID,
			Authorization:  header(ev.Headers, "authorization"),
			QueryToken:     ev.QueryStringParameters["token"],
			AcceptLanguage: header(ev.Headers, "accept-language"),
			QueryLang:      ev.QueryStringParameters["lang"],
		})
		if err != nil {
			status, body, _ := api.ErrorJSON(err, header(ev.Headers, "accept-language"))
			if status >= 500 {
				log.Error("stream connect failed", "err", err)
				return events.APIGatewayProxyResponse{StatusCode: status, Body: string(body)}, err
			}
			log.Info("stream connect refused", "status", status)
			return events.APIGatewayProxyResponse{StatusCode: status, Body: string(body)}, nil
		}
	case "$disconnect":
		if err := hub.Disconnect(ctx, rc.ConnectionID); err != nil {
			log.Error("stream disconnect failed", "err", err)
			return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}, err
		}
	default:
		body := []byte(ev.Body)
		if ev.IsBase64Encoded {
			if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
				body = []byte(ev.Body) // answered as not JSON
			}
		}
		if err := hub.Message(ctx, rc.ConnectionID, body); err != nil {
			if errors.Is(err, push.ErrNoConnection) {
				log.Warn("message on an unknown connection", "err", err)
				return events.APIGatewayProxyResponse{StatusCode: http.StatusGone}, nil
			}
			log.Error("stream message failed", "err", err)
			return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}, err
		}
	}
	log.Info("stream route handled", "ms", time.Since(start).Milliseconds())
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
}

// streamHub returns the hub posting to the stage the event came from (or
// to STREAM_ENDPOINT when it is set).
func (a *App) streamHub(rc events.APIGatewayWebsocketProxyRequestContext) (*push.Hub, error) {
	endpoint := a.streamEndpoint
	if endpoint == "" {
		if rc.DomainName == "" || rc.Stage == "" {
			return nil, errors.New("the event names no domain or stage to post to")
		}
		endpoint = "https://" + rc.DomainName + "/" + rc.Stage
	}
	a.hubs.mu.Lock()
	defer a.hubs.mu.Unlock()
	if h, ok := a.hubs.byEndpoint[endpoint]; ok {
		return h, nil
	}
	if a.newPoster == nil || a.connections == nil {
		return nil, fmt.Errorf("%s function serves no stream", a.fn)
	}
	poster, err := a.newPoster(endpoint)
	if err != nil {
		return nil, err
	}
	h := push.New(a.service, a.connections, poster, a.log).WithMetrics(a.metrics)
	if a.hubs.byEndpoint == nil {
		a.hubs.byEndpoint = map[string]*push.Hub{}
	}
	a.hubs.byEndpoint[endpoint] = h
	return h, nil
}

// hubCache keeps the hub of each endpoint (one in practice).
type hubCache struct {
	mu         sync.Mutex
	byEndpoint map[string]*push.Hub
}

// HandleStreamRecords is the fan-out: for each record of the games table's
// change stream (a committed version), the version is pushed to the game's
// subscribers and the commit's effects run (the game's timer, the AI). On a
// failure the records from the failed one on are reported for retry
// (ReportBatchItemFailures), in order, so a game's versions stay in order;
// the event source mapping's bisect and on-failure destination bound the
// retries.
func (a *App) HandleStreamRecords(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	hub, err := a.streamHub(events.APIGatewayWebsocketProxyRequestContext{})
	if err != nil {
		return resp, err
	}
	for i, r := range ev.Records {
		if err := a.fanoutRecord(ctx, hub, r); err != nil {
			a.log.Error("fan-out failed; the stream delivers the record again", "eventId", r.EventID, "seq", r.Change.SequenceNumber, "err", err)
			for _, rest := range ev.Records[i:] {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rest.Change.SequenceNumber})
			}
			return resp, nil
		}
	}
	return resp, nil
}

func (a *App) fanoutRecord(ctx context.Context, hub *push.Hub, r events.DynamoDBEventRecord) error {
	if r.EventName != "INSERT" && r.EventName != "MODIFY" {
		return nil // REMOVE: a TTL deletion of a finished game
	}
	next, err := dynamostore.DecodeStreamImage(r.Change.NewImage)
	if err != nil {
		return fmt.Errorf("new image: %w", err)
	}
	ctx = a.withRequest(ctx, r.EventID, "fanout", next.GameID)
	var prev service.GameRecord
	if len(r.Change.OldImage) > 0 {
		if prev, err = dynamostore.DecodeStreamImage(r.Change.OldImage); err != nil {
			return fmt.Errorf("old image: %w", err)
		}
	}
	start := time.Now()
	sent, err := hub.Fanout(ctx, next)
	if err != nil {
		a.metrics.Count(obs.MetricPushFailures, 1)
		return fmt.Errorf("push %s v%d: %w", next.GameID, next.Version, err)
	}
	if err := a.service.Committed(ctx, prev, next); err != nil {
		return fmt.Errorf("effects of %s v%d: %w", next.GameID, next.Version, err)
	}
	obs.Logger(ctx).InfoContext(ctx, "record fanned out", "version", next.Version, "sent", sent, "ms", time.Since(start).Milliseconds())
	return nil
}

// header reads a header by name in any case (WebSocket events keep the
// client's spelling).
func header(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
