// Package apigwpost posts stream messages to API Gateway WebSocket
// connections through the @connections management API:
//
//	POST   {endpoint}/@connections/{connectionId}   body: the message
//	DELETE {endpoint}/@connections/{connectionId}   closes the connection
//
// signed with SigV4 for the service "execute-api". It is a plain HTTP call
// (the SDK's apigatewaymanagementapi module is not available to this build),
// with the SDK's credentials, signer and retryer.
package apigwpost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"chessapi/shared/push"
	"chessapi/shared/retry"
)

// Poster is a push.Poster on the management API of one WebSocket API stage.
type Poster struct {
	endpoint string
	region   string
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	client   *http.Client
	// retry bounds the tries of one post on throttling and 5xx.
	retry retry.Policy
}

var (
	_ push.Poster = (*Poster)(nil)
	_ push.Closer = (*Poster)(nil)
)

// New returns a Poster for the stage whose connections URL is endpoint
// (https://{api-id}.execute-api.{region}.amazonaws.com/{stage}, a stack
// output; a local stand-in in tests).
func New(awsCfg aws.Config, endpoint string) (*Poster, error) {
	if endpoint == "" {
		return nil, errors.New("apigwpost: no connections endpoint")
	}
	if _, err := url.Parse(endpoint); err != nil {
		return nil, fmt.Errorf("apigwpost: endpoint %q: %w", endpoint, err)
	}
	if awsCfg.Credentials == nil {
		return nil, errors.New("apigwpost: no credentials")
	}
	return &Poster{
		endpoint: strings.TrimSuffix(endpoint, "/"),
		region:   awsCfg.Region,
		creds:    awsCfg.Credentials,
		signer:   v4.NewSigner(),
		client:   &http.Client{Timeout: 5 * time.Second},
		retry:    retry.ConnectionPost,
	}, nil
}

// Post sends data to the connection. A connection that is gone (410) is
// push.ErrGone, never retried; throttling (429) and server errors are
// retried as retry.ConnectionPost says.
func (p *Poster) Post(ctx context.Context, connID string, data []byte) error {
	return p.call(ctx, http.MethodPost, connID, data)
}

// Close closes the connection (API Gateway then runs the $disconnect
// route, best-effort). A connection that is gone (410) is push.ErrGone;
// throttling and server errors are retried as for Post.
func (p *Poster) Close(ctx context.Context, connID string) error {
	return p.call(ctx, http.MethodDelete, connID, nil)
}

// call is one signed request on a connection, with retries.
func (p *Poster) call(ctx context.Context, method, connID string, data []byte) error {
	u := p.endpoint + "/@connections/" + url.PathEscape(connID)
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	verb := "post to"
	if method == http.MethodDelete {
		verb = "close"
	}
	err := p.retry.Do(ctx, func(int) error {
		var body io.Reader
		if data != nil {
			body = bytes.NewReader(data)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, body)
		if err != nil {
			return retry.Permanent(fmt.Errorf("apigwpost: %w", err))
		}
		if data != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		creds, err := p.creds.Retrieve(ctx)
		if err != nil {
			return retry.Permanent(fmt.Errorf("apigwpost: credentials: %w", err))
		}
		if err := p.signer.SignHTTP(ctx, creds, req, hash, "execute-api", p.region, time.Now()); err != nil {
			return retry.Permanent(fmt.Errorf("apigwpost: sign: %w", err))
		}
		res, err := p.client.Do(req)
		if err != nil {
			return err
		}
		answer, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
		res.Body.Close()
		switch {
		case res.StatusCode == http.StatusGone:
			return retry.Permanent(push.ErrGone)
		case res.StatusCode >= 200 && res.StatusCode < 300:
			return nil
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
			return fmt.Errorf("status %d: %s", res.StatusCode, answer)
		default:
			return retry.Permanent(fmt.Errorf("apigwpost: %s %s: status %d: %s", verb, connID, res.StatusCode, answer))
		}
	})
	var gaveUp *retry.Error
	if errors.As(err, &gaveUp) {
		return fmt.Errorf("apigwpost: %s %s: %w", verb, connID, err)
	}
	return err
}
