package dynamostore

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"chessapi/deploy"
	"chessapi/shared/apikey"
)

// TestTemplateGrantsOnlyTheFunctionsPartitions: each function's grants on
// the data table (template.yaml, dynamodb:LeadingKeys) name exactly the
// partitions this package reads and writes for what the function serves,
// so a renamed prefix fails here rather than as AccessDenied on AWS (the
// emulators do not enforce IAM), and no function can reach another's
// items (the move function could once have minted API keys).
func TestTemplateGrantsOnlyTheFunctionsPartitions(t *testing.T) {
	tmpl, err := deploy.LoadTemplate(filepath.Join("..", "..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The service's counter of wrong link codes (shared/service
	// players.go: "linkfail#<client>"), counted in the hit# partitions.
	linkFail := hitPrefix + serviceLinkFailKey(t) + "*"
	// The service's counter of wrong recovery codes (shared/service
	// accounts.go: "recoverfail#<player>").
	recoverFail := hitPrefix + serviceCounterKey(t, "accounts.go", `"recoverfail#" + playerID`, "recoverfail#") + "*"
	const (
		get, put, update, del, query = "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"
		batchGet                     = "dynamodb:BatchGetItem"
	)
	all := func(actions []string, prefixes ...string) map[string][]string {
		m := map[string][]string{}
		for _, a := range actions {
			m[a] = prefixes
		}
		return m
	}
	merge := func(ms ...map[string][]string) map[string][]string {
		out := map[string][]string{}
		for _, m := range ms {
			for a, p := range m {
				out[a] = append(out[a], p...)
			}
		}
		return out
	}
	// A player token resolved to its player, and a due timeout ending a
	// rated game (both players' ratings read): every function that shows
	// a game.
	readPlayers := all([]string{get}, tokenPrefix+"*", playerPrefix+"*")
	// Delivering notifications: the inbox entries, push claims and pushed
	// marks, the devices and (a gone one removed) its token's owner.
	notifications := all([]string{get, put, update, del}, devicesPrefix+"*", deviceTokenPrefix+"*", inboxPrefix+"*")
	want := map[string]map[string][]string{
		// Players (their sessions' entries and blocks queried and read in
		// batches), tokens, link codes, the wrong-code counters, pairing
		// slots.
		// And an ended session's connections, found under its token.
		// And devices, their tokens' owners and the inboxes (SPEC §16.3).
		"MoveFunction": merge(all([]string{get, put, update, del, query, batchGet},
			playerPrefix+"*", tokenPrefix+"*", linkPrefix+"*", linkFail, recoverFail, slotPrefix+"*"),
			all([]string{query, del}, tokenConnPrefix+"*", connPrefix+"*", subPrefix+"*"),
			all([]string{get, put, update, del}, devicesPrefix+"*", deviceTokenPrefix+"*", inboxPrefix+"*"),
			all([]string{query}, inboxPrefix+"*")),
		"ViewFunction": readPlayers,
		"PollFunction": readPlayers,
		// A flag fall in a rated game reads both ratings; the reminders
		// are notifications, kept off the devices of a player following
		// the account on the stream (its subscriptions).
		"TimeoutFunction": merge(all([]string{get}, playerPrefix+"*"), notifications, all([]string{query}, subPrefix+"*")),
		// Keys by id, their two counters, their in-flight leases.
		"AiFunction": merge(
			all([]string{get}, apiKeyPrefix+"*"),
			all([]string{update}, hitPrefix+apikey.RateCounterPrefix+"*", hitPrefix+apikey.DailyCounterPrefix+"*"),
			all([]string{get, put, update}, leasePrefix+apikey.InFlightPrefix+"*"),
		),
		"AiSeatFunction": {},
		// Connections and subscriptions, and the views they push.
		"StreamFunction": merge(all([]string{get, put, del, query}, connPrefix+"*", subPrefix+"*", tokenConnPrefix+"*"), readPlayers),
		// The push consumer: a game's subscribers, gone connections deleted.
		"FanoutFunction": all([]string{get, del, query}, connPrefix+"*", subPrefix+"*", tokenConnPrefix+"*"),
		// The effects consumer: ratings applied, a commit's notifications
		// delivered (whether a player follows their account: a query).
		"EffectsFunction": merge(all([]string{get, put}, playerPrefix+"*"), notifications, all([]string{query}, subPrefix+"*")),
	}
	granted := map[string]bool{}
	for _, fn := range tmpl.Functions {
		w, ok := want[fn.LogicalID]
		if !ok {
			t.Errorf("%s: no expected data table partitions; add it to this test", fn.LogicalID)
			continue
		}
		got := dataTableGrants(t, tmpl, fn.LogicalID)
		if len(got) != len(w) {
			t.Errorf("%s data table actions %v; want %v", fn.LogicalID, got, w)
		}
		for action, prefixes := range w {
			g, wp := slices.Sorted(slices.Values(got[action])), slices.Sorted(slices.Values(prefixes))
			if !slices.Equal(g, wp) {
				t.Errorf("%s %s on %v; want %v", fn.LogicalID, action, g, wp)
			}
		}
		for _, ps := range got {
			for _, p := range ps {
				granted[p] = true
			}
		}
	}
	// Every partition prefix this package writes is granted to some
	// function: a new kind of item must be given to the functions that
	// use it (or the test told why none does).
	for name, prefix := range partitionPrefixes(t) {
		found := false
		for g := range granted {
			found = found || strings.HasPrefix(g, prefix)
		}
		if !found {
			t.Errorf("the partitions %s (%s) are granted to no function", prefix, name)
		}
	}
}

// dataTableGrants reads a function's grants on the data table: action →
// the dynamodb:LeadingKeys patterns of the statements granting it.
func dataTableGrants(t *testing.T, tmpl *deploy.Template, fn string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	policies, _ := tmpl.Properties(fn)["Policies"].([]any)
	for _, pol := range policies {
		doc, _ := pol.(map[string]any)
		statements, _ := doc["Statement"].([]any)
		for _, st := range statements {
			m, _ := st.(map[string]any)
			if !strings.Contains(fmt.Sprint(m["Resource"]), "DataTable") {
				continue
			}
			cond, _ := m["Condition"].(map[string]any)
			like, _ := cond["ForAllValues:StringLike"].(map[string]any)
			keys, _ := like["dynamodb:LeadingKeys"].([]any)
			if len(keys) == 0 {
				t.Errorf("%s: statement %v on the data table has no dynamodb:LeadingKeys condition", fn, m["Sid"])
			}
			actions, ok := m["Action"].([]any)
			if !ok {
				actions = []any{m["Action"]}
			}
			for _, a := range actions {
				for _, k := range keys {
					got[fmt.Sprint(a)] = append(got[fmt.Sprint(a)], fmt.Sprint(k))
				}
			}
		}
	}
	return got
}

// partitionPrefixes reads this package's partition key prefixes from its
// source: every string constant named ...Prefix whose value ends in "#".
func partitionPrefixes(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) || !strings.HasSuffix(name.Name, "Prefix") {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if strings.HasSuffix(v, "#") {
						out[name.Name] = v
					}
				}
			}
		}
	}
	if len(out) < 8 {
		t.Fatalf("found only the partition prefixes %v", out)
	}
	return out
}

// serviceLinkFailKey reads the service's counter key prefix for wrong
// link codes from its source (it is not exported).
// serviceCounterKey checks that the service's file still counts under
// key (the Go expression) and returns the key's prefix.
func serviceCounterKey(t *testing.T, file, key, prefix string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "service", file))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), key) {
		t.Fatalf("shared/service/%s no longer counts under %s: update the template's grant and this test", file, key)
	}
	return prefix
}

func serviceLinkFailKey(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "service", "players.go"))
	if err != nil {
		t.Fatal(err)
	}
	const key = `"linkfail#" + client`
	if !strings.Contains(string(src), key) {
		t.Fatalf("shared/service/players.go no longer counts wrong link codes under %s: update the template's grant and this test", key)
	}
	return "linkfail#"
}

// TestThrottledClassifies: DynamoDB's throughput errors (and the SDK's
// retry quota running out on them) become a ThrottledError that says
// when to retry; anything else stays as it was.
func TestThrottledClassifies(t *testing.T) {
	for _, err := range []error{
		&types.ProvisionedThroughputExceededException{Message: aws.String("exceeded")},
		&types.RequestLimitExceeded{Message: aws.String("account limit")},
		&smithy.GenericAPIError{Code: "ThrottlingException", Message: "rate exceeded"},
		fmt.Errorf("operation error DynamoDB: UpdateItem: %w", &types.ProvisionedThroughputExceededException{}),
		&ratelimit.QuotaExceededError{},
	} {
		got := throttled(err)
		var th *ThrottledError
		if !errors.As(got, &th) || th.RetryAfter() != time.Second || !errors.Is(got, err) {
			t.Errorf("throttled(%v) = %v; want a ThrottledError wrapping it", err, got)
		}
	}
	for _, err := range []error{
		nil,
		errors.New("connection refused"),
		&types.ConditionalCheckFailedException{},
		&smithy.GenericAPIError{Code: "ValidationException"},
	} {
		var th *ThrottledError
		if got := throttled(err); errors.As(got, &th) || got != err {
			t.Errorf("throttled(%v) = %v; want it unchanged", err, got)
		}
	}
}
