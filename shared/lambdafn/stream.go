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
	"chessapi/shared/game"
	"chessapi/shared/obs"
	"chessapi/shared/push"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// The stream on AWS: the WebSocket API's routes (the stream function) and
// the games table's change stream (the fan-out function). The HTTP edge's
// API Gateway transport (api.GatewayStream) does the work; these handlers
// take the events as Lambda delivers them.

// HandleWebSocket serves the WebSocket API's routes: $connect (a
// malformed token refuses the connection: a non-2xx answer),
// $disconnect, and every client message (routes subscribe, unsubscribe,
// ping and $default), answered by posts to the connection. An error
// result means the work could not be done (Lambda logs it; API Gateway
// tells the client "internal server error").
func (a *App) HandleWebSocket(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	gs, err := a.gatewayStream(ev.RequestContext)
	if err != nil {
		a.log.Error("stream: no transport", "err", err)
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}, err
	}
	rc := ev.RequestContext
	ctx = a.withRequest(ctx, rc.RequestID, rc.RouteKey, "")
	log := obs.Logger(ctx).With("connection", rc.ConnectionID)
	start := time.Now()
	switch rc.RouteKey {
	case "$connect":
		err := gs.Connect(ctx, api.GatewayConnect{
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
		if err := gs.Disconnect(ctx, rc.ConnectionID); err != nil {
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
		if err := gs.Message(ctx, rc.ConnectionID, body); err != nil {
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

// gatewayStream returns the transport posting to the stage the event came
// from (or to STREAM_ENDPOINT when it is set).
func (a *App) gatewayStream(rc events.APIGatewayWebsocketProxyRequestContext) (*api.GatewayStream, error) {
	endpoint := a.streamEndpoint
	if endpoint == "" {
		if rc.DomainName == "" || rc.Stage == "" {
			return nil, errors.New("the event names no domain or stage to post to")
		}
		endpoint = "https://" + rc.DomainName + "/" + rc.Stage
	}
	a.streams.mu.Lock()
	defer a.streams.mu.Unlock()
	if gs, ok := a.streams.byEndpoint[endpoint]; ok {
		return gs, nil
	}
	if a.newPoster == nil || a.connections == nil {
		return nil, fmt.Errorf("%s function serves no stream", a.fn)
	}
	poster, err := a.newPoster(endpoint)
	if err != nil {
		return nil, err
	}
	gs := api.NewGatewayStream(a.service, a.connections, poster, a.log).WithMetrics(a.metrics)
	if a.streams.byEndpoint == nil {
		a.streams.byEndpoint = map[string]*api.GatewayStream{}
	}
	a.streams.byEndpoint[endpoint] = gs
	return gs, nil
}

// endSessionConnections is the move function's service.SessionsEnded: the
// stream's connections made with an ended session's token end with it.
// With a stream endpoint each is ended through the transport
// (GatewayStream.EndConnection: its records and subscriptions, the
// presence rule for its seats, the socket closed by DELETE @connections);
// what is left under the token (everything, without an endpoint) is then
// dropped, so the fan-out posts nothing more to those connections and
// their next message finds no connection (410).
func (a *App) endSessionConnections(ctx context.Context, ended []service.Session) error {
	var gs *api.GatewayStream
	if a.streamEndpoint != "" && a.connections != nil && a.newPoster != nil {
		var err error
		if gs, err = a.gatewayStream(events.APIGatewayWebsocketProxyRequestContext{}); err != nil {
			return err
		}
	}
	var errs []error
	for _, s := range ended {
		if gs != nil {
			ids, err := a.sessionConns.TokenConnections(ctx, s.TokenHash)
			if err != nil {
				errs = append(errs, err)
			}
			for _, id := range ids {
				if err := gs.EndConnection(ctx, id); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if _, err := a.sessionConns.DropTokenConnections(ctx, s.TokenHash); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// streamCache keeps the transport of each endpoint (one in practice).
type streamCache struct {
	mu         sync.Mutex
	byEndpoint map[string]*api.GatewayStream
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
	gs, err := a.gatewayStream(events.APIGatewayWebsocketProxyRequestContext{})
	if err != nil {
		return resp, err
	}
	for i, r := range ev.Records {
		if err := a.fanoutRecord(ctx, gs, r); err != nil {
			a.log.Error("fan-out failed; the stream delivers the record again", "eventId", r.EventID, "seq", r.Change.SequenceNumber, "err", err)
			for _, rest := range ev.Records[i:] {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rest.Change.SequenceNumber})
			}
			return resp, nil
		}
	}
	return resp, nil
}

// fanoutRecord decodes a record once and hands the states to the record's
// two consumers, in order: the push to the game's subscribers, then the
// commit's effects (Service.Committed). Each takes only the decoded states,
// so each can become a stream consumer of its own.
func (a *App) fanoutRecord(ctx context.Context, gs *api.GatewayStream, r events.DynamoDBEventRecord) error {
	if r.EventName != "INSERT" && r.EventName != "MODIFY" {
		return nil // REMOVE: a TTL deletion of a finished game
	}
	prev, next, err := a.decodeRecord(r)
	if err != nil {
		return err
	}
	ctx = a.withRequest(ctx, r.EventID, "fanout", next.GameID)
	start := time.Now()
	sent, err := gs.Deliver(ctx, prev, next)
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

// decodeRecord reads a record's images into the committed state and the
// one it replaced (nil for a new game).
func (a *App) decodeRecord(r events.DynamoDBEventRecord) (prev, next *game.State, err error) {
	image := func(which string, img map[string]events.DynamoDBAttributeValue) (*game.State, error) {
		rec, err := dynamostore.DecodeStreamImage(img)
		if err != nil {
			return nil, fmt.Errorf("%s image: %w", which, err)
		}
		st, err := a.service.Decode(rec)
		if err != nil {
			return nil, fmt.Errorf("%s image: %w", which, err)
		}
		return st, nil
	}
	if next, err = image("new", r.Change.NewImage); err != nil {
		return nil, nil, err
	}
	if len(r.Change.OldImage) > 0 {
		if prev, err = image("old", r.Change.OldImage); err != nil {
			return nil, nil, err
		}
	}
	return prev, next, nil
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
