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
)

// The stream on AWS: the WebSocket API's routes (the stream function) and
// the push side of the games table's change stream (the fan-out function;
// its batches are fanout.go's). The HTTP edge's API Gateway transport
// (api.GatewayStream) does the work; these handlers take the events as
// Lambda delivers them.

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
		if !a.fromTheEdge(ev.Headers) {
			log.Warn("stream connect refused: it did not come through the edge")
			status, body, _ := notThroughTheEdge(header(ev.Headers, "accept-language"))
			return events.APIGatewayProxyResponse{StatusCode: status, Body: body}, nil
		}
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

// pushRecord is the push side of the fan-out (fanout.go calls it for every
// new version of a game, prev being the version it replaced, nil for a new
// game): the version goes to the game's subscribers. An error means the
// record is to be delivered again.
func (a *App) pushRecord(ctx context.Context, gs *api.GatewayStream, prev, next *game.State) error {
	sent, err := gs.Deliver(ctx, prev, next)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	obs.Logger(ctx).InfoContext(ctx, "record pushed", "version", next.Version, "sent", sent)
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
