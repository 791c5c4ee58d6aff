// Command apikeys creates, lists and revokes the API keys of
// POST /v1/ai/move (docs/api-keys.md).
//
//	apikeys [-table NAME] [-endpoint URL] <command>     keys in DynamoDB's data table
//	apikeys -data FILE <command>                         keys in the local server's file
//
//	create -name NAME [-rate N] [-daily N] [-inflight N]
//	                                         make a key; its text is printed once, on stdout
//	list [-json]                             every key: id, name, limits, created, revoked
//	revoke ID                                revoke a key; its next request is refused
//
// -table defaults to $DATA_TABLE; AWS credentials, region and endpoint come
// from the SDK's usual sources (AWS_PROFILE, AWS_REGION,
// AWS_ENDPOINT_URL_DYNAMODB, ...). The embedded file has one user at a
// time: stop the local server before using -data.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/shared/apikey"
	"chessapi/shared/store/boltstore"
	"chessapi/shared/store/dynamostore"
)

func main() {
	c := cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, now: time.Now, random: rand.Reader}
	os.Exit(c.run(context.Background(), os.Args[1:]))
}

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the store refused or failed
	exitUsage = 2 // bad flags or arguments
)

// cli is one invocation's surroundings (tests replace them).
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
	random         io.Reader
}

// usageError is a mistake in the command line: the message says which
// flag or argument, and the usage follows.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: apikeys [-table NAME] [-endpoint URL] | [-data FILE]  <command>

commands:
  create -name NAME [-rate N] [-daily N] [-inflight N]
                                           make a key; its text is printed once, on stdout
  list [-json]                             every key: id, name, limits, created, revoked
  revoke ID                                revoke a key; its next request is refused

store (one of):
  -table NAME     DynamoDB data table (default $DATA_TABLE), with the SDK's credentials and region
  -endpoint URL   DynamoDB endpoint (default: the SDK's, or AWS_ENDPOINT_URL_DYNAMODB)
  -data FILE      the local server's embedded store (stop the server first)
`

// run runs one command line and returns the exit status.
func (c cli) run(ctx context.Context, args []string) int {
	err := c.dispatch(ctx, args)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp):
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(c.stderr, "apikeys:", err)
		}
		fmt.Fprint(c.stderr, usage)
		return exitUsage
	}
	fmt.Fprintln(c.stderr, "apikeys:", err)
	return exitFail
}

func (c cli) dispatch(ctx context.Context, args []string) error {
	global := flag.NewFlagSet("apikeys", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	table := global.String("table", "", "DynamoDB data table (default $DATA_TABLE)")
	endpoint := global.String("endpoint", "", "DynamoDB endpoint URL")
	dataPath := global.String("data", "", "the local server's embedded store file")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	rest := global.Args()
	if len(rest) == 0 {
		return usagef("no command (create, list or revoke)")
	}
	cmd, cmdArgs := rest[0], rest[1:]
	var run func(context.Context, apikey.Store, []string) error
	switch cmd {
	case "create":
		run = c.create
	case "list":
		run = c.list
	case "revoke":
		run = c.revoke
	default:
		return usagef("unknown command %q (create, list or revoke)", cmd)
	}
	// Check the command's own arguments before touching any store.
	if err := run(ctx, nil, cmdArgs); err != nil && !errors.Is(err, errNoStore) {
		return err
	}
	store, closeStore, err := c.openStore(ctx, *table, *endpoint, *dataPath)
	if err != nil {
		return err
	}
	defer closeStore()
	return run(ctx, store, cmdArgs)
}

// errNoStore ends a command's dry run once its arguments are checked.
var errNoStore = errors.New("no store yet")

// openStore opens the embedded file or the data table.
func (c cli) openStore(ctx context.Context, table, endpoint, dataPath string) (apikey.Store, func(), error) {
	if dataPath != "" {
		if table != "" || endpoint != "" {
			return nil, nil, usagef("-data is the local file; it cannot be used with -table or -endpoint")
		}
		s, err := boltstore.Open(dataPath)
		if err != nil {
			return nil, nil, fmt.Errorf("%w (is the local server running? stop it first)", err)
		}
		return s, func() {
			if err := s.Close(); err != nil {
				fmt.Fprintln(c.stderr, "apikeys:", err)
			}
		}, nil
	}
	if table == "" {
		table = strings.TrimSpace(c.getenv("DATA_TABLE"))
	}
	if table == "" {
		return nil, nil, usagef("no store: give -table NAME (or set DATA_TABLE), or -data FILE")
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("AWS configuration: %w", err)
	}
	var opts []func(*dynamodb.Options)
	if endpoint != "" {
		if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
			return nil, nil, usagef("-endpoint %q is not an http(s) URL", endpoint)
		}
		opts = append(opts, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
		if awsCfg.Region == "" {
			awsCfg.Region = "us-east-1" // local emulators take any region
		}
	}
	if awsCfg.Region == "" {
		return nil, nil, errors.New("no AWS region: set AWS_REGION or a profile's region")
	}
	d, err := dynamostore.NewData(dynamodb.NewFromConfig(awsCfg, opts...), table)
	if err != nil {
		return nil, nil, err
	}
	return d, func() {}, nil
}

// create makes a key and stores its record; the key's text goes to
// stdout alone (a script can capture it), the rest to stderr.
func (c cli) create(ctx context.Context, store apikey.Store, args []string) error {
	fs := flag.NewFlagSet("create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("name", "", "who holds the key (shown by list)")
	rate := fs.Int64("rate", apikey.DefaultLimits.PerSecond, "requests per second")
	daily := fs.Int64("daily", apikey.DefaultLimits.PerDay, "requests per UTC day")
	inFlight := fs.Int64("inflight", apikey.DefaultLimits.InFlight, "requests being answered at once")
	if err := fs.Parse(args); err != nil {
		return usagef("create: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("create: unexpected argument %q", fs.Arg(0))
	}
	limits := apikey.Limits{PerSecond: *rate, PerDay: *daily, InFlight: *inFlight}
	if err := apikey.ValidateName(*name); err != nil {
		return usagef("create: -name %s", strings.TrimPrefix(err.Error(), "apikey: name "))
	}
	if err := limits.Validate(); err != nil {
		var fe *apikey.FieldError
		if errors.As(err, &fe) {
			flagName := map[string]string{"perSecond": "-rate", "perDay": "-daily", "inFlight": "-inflight"}[fe.Field]
			return usagef("create: %s %s", flagName, fe.Problem)
		}
		return usagef("create: %v", err)
	}
	if store == nil {
		return errNoStore
	}
	key, rec, err := apikey.NewRecord(c.random, *name, limits, c.now())
	if err != nil {
		return err
	}
	if err := store.PutAPIKey(ctx, rec); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	fmt.Fprintln(c.stdout, key.String())
	fmt.Fprintf(c.stderr, "created key %s for %q: %d requests a second, %d a UTC day, %d at once.\n"+
		"The key above is shown only now; the service keeps only its hash. Hand it to its holder over a safe channel.\n",
		rec.ID, rec.Name, rec.Limits.PerSecond, rec.Limits.PerDay, rec.Limits.MaxInFlightRequests())
	return nil
}

// keyJSON is a record as list -json prints it.
type keyJSON struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	PerSecond int64      `json:"perSecond"`
	PerDay    int64      `json:"perDay"`
	InFlight  int64      `json:"inFlight"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

// list prints every key, oldest first: a table, or JSON with -json.
// Never a secret: the store has none.
func (c cli) list(ctx context.Context, store apikey.Store, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return usagef("list: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("list: unexpected argument %q", fs.Arg(0))
	}
	if store == nil {
		return errNoStore
	}
	recs, err := store.APIKeys(ctx)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if *asJSON {
		out := make([]keyJSON, 0, len(recs))
		for _, r := range recs {
			k := keyJSON{ID: r.ID, Name: r.Name, PerSecond: r.Limits.PerSecond, PerDay: r.Limits.PerDay, InFlight: r.Limits.MaxInFlightRequests(), CreatedAt: r.CreatedAt}
			if r.Revoked() {
				at := r.RevokedAt
				k.RevokedAt = &at
			}
			out = append(out, k)
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tPER SECOND\tPER DAY\tAT ONCE\tCREATED (UTC)\tREVOKED (UTC)")
	for _, r := range recs {
		revoked := "-"
		if r.Revoked() {
			revoked = r.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.ID, r.Name, r.Limits.PerSecond, r.Limits.PerDay, r.Limits.MaxInFlightRequests(), r.CreatedAt.Format(time.RFC3339), revoked)
	}
	return w.Flush()
}

// revoke revokes one key by its id.
func (c cli) revoke(ctx context.Context, store apikey.Store, args []string) error {
	if len(args) != 1 {
		return usagef("revoke: give exactly one key id (list shows them)")
	}
	id := args[0]
	if !apikey.ValidID(id) {
		// A whole key pasted in: take its id, never echo its secret.
		if k, err := apikey.Parse(id); err == nil {
			id = k.ID
		} else {
			// Not echoed: it may be a mistyped key, secret and all.
			return usagef("revoke: the argument is not a key id (16 characters of a-z and 2-7; list shows them)")
		}
	}
	if store == nil {
		return errNoStore
	}
	rec, revokedNow, err := store.RevokeAPIKey(ctx, id, c.now())
	if errors.Is(err, apikey.ErrNotFound) {
		return fmt.Errorf("revoke: no key %s", id)
	}
	if err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	if revokedNow {
		fmt.Fprintf(c.stdout, "revoked %s (%q) at %s\n", rec.ID, rec.Name, rec.RevokedAt.Format(time.RFC3339))
	} else {
		fmt.Fprintf(c.stdout, "%s (%q) was already revoked at %s\n", rec.ID, rec.Name, rec.RevokedAt.Format(time.RFC3339))
	}
	return nil
}
