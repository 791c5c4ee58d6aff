package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"chessapi/deploy"
	"chessapi/infra/emulator"
)

// dataTableGuard holds every function's requests to the data table to its
// grants in template.yaml, as IAM would on AWS (moto enforces none): a
// request whose action no statement on the data table grants, or whose
// partition key (dynamodb:LeadingKeys) matches none of the statement's
// ForAllValues:StringLike patterns, is refused with DynamoDB's
// AccessDeniedException and counted as "iam:DataTableDenied". A function
// is known by its access key id, which the stack sets to its logical ID;
// any other caller passes unchecked.
type dataTableGuard struct {
	next   http.Handler
	table  string
	grants map[string][]dataGrant // by function logical ID
	counts *counters
	log    io.Writer
}

// dataGrant is one statement on the data table.
type dataGrant struct {
	actions  []string
	patterns []*regexp.Regexp // empty: no LeadingKeys condition (every key)
}

// dataTableGrants reads each function's statements on the data table.
func dataTableGrants(tmpl *deploy.Template) map[string][]dataGrant {
	out := map[string][]dataGrant{}
	for _, fn := range tmpl.Functions {
		out[fn.LogicalID] = nil
		policies, _ := tmpl.Properties(fn.LogicalID)["Policies"].([]any)
		for _, pol := range policies {
			doc, _ := pol.(map[string]any)
			statements, _ := doc["Statement"].([]any)
			for _, st := range statements {
				m, _ := st.(map[string]any)
				if m["Effect"] != "Allow" || !strings.Contains(fmt.Sprint(m["Resource"]), "DataTable") {
					continue
				}
				g := dataGrant{actions: asStrings(m["Action"])}
				cond, _ := m["Condition"].(map[string]any)
				like, _ := cond["ForAllValues:StringLike"].(map[string]any)
				for _, p := range asStrings(like["dynamodb:LeadingKeys"]) {
					g.patterns = append(g.patterns, stringLike(p))
				}
				out[fn.LogicalID] = append(out[fn.LogicalID], g)
			}
		}
	}
	return out
}

func asStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// stringLike is IAM's StringLike pattern: * any run of characters, ? one.
func stringLike(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range p {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

var credential = regexp.MustCompile(`Credential=([^/,\s]+)/`)

func (g *dataTableGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	m := credential.FindStringSubmatch(r.Header.Get("Authorization"))
	fn := ""
	if m != nil {
		fn = m[1]
	}
	grants, isFunction := g.grants[fn]
	if !isFunction || !strings.HasPrefix(target, "DynamoDB_") {
		g.next.ServeHTTP(w, r)
		return
	}
	body, err := emulator.ReadBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, op, _ := strings.Cut(target, ".")
	action := "dynamodb:" + op
	var req dataRequest
	_ = json.Unmarshal(body, &req)
	if op == "BatchGetItem" {
		req.batchGetKeys(body, g.table)
	}
	if req.TableName != g.table {
		g.next.ServeHTTP(w, r)
		return
	}
	keys := req.leadingKeys(op)
	if allowed(grants, action, keys, req.IndexName != "") {
		g.next.ServeHTTP(w, r)
		return
	}
	g.counts.event("iam:DataTableDenied", 1)
	fmt.Fprintf(g.log, "emustack: IAM: %s may not %s the data table's partitions %q (template.yaml grants %s)\n", fn, action, keys, describeGrants(grants))
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
	w.WriteHeader(http.StatusBadRequest)
	msg, _ := json.Marshal(fmt.Sprintf("User: %s is not authorized to perform: %s on resource: table/%s because no identity-based policy allows it", fn, action, g.table))
	fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#AccessDeniedException","Message":%s}`, msg)
}

// allowed: some statement grants action on every leading key (IAM's
// ForAllValues: a request with no leading key, a Scan, passes any
// pattern, which is why no statement may grant one). No statement grants
// a data table index.
func allowed(grants []dataGrant, action string, keys []string, index bool) bool {
	if index {
		return false
	}
	for _, g := range grants {
		if !slices.Contains(g.actions, action) {
			continue
		}
		ok := true
		for _, k := range keys {
			ok = ok && (len(g.patterns) == 0 || slices.ContainsFunc(g.patterns, func(p *regexp.Regexp) bool { return p.MatchString(k) }))
		}
		if ok {
			return true
		}
	}
	return false
}

func describeGrants(grants []dataGrant) string {
	var parts []string
	for _, g := range grants {
		var ps []string
		for _, p := range g.patterns {
			ps = append(ps, p.String())
		}
		parts = append(parts, fmt.Sprintf("%v on %v", g.actions, ps))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// dataRequest is what the guard reads of a DynamoDB request.
type dataRequest struct {
	TableName                 string                       `json:"TableName"`
	IndexName                 string                       `json:"IndexName"`
	Key                       map[string]map[string]any    `json:"Key"`
	Item                      map[string]map[string]any    `json:"Item"`
	KeyConditionExpression    string                       `json:"KeyConditionExpression"`
	ExpressionAttributeNames  map[string]string            `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues map[string]map[string]any    `json:"ExpressionAttributeValues"`
	RequestItems              map[string][]json.RawMessage `json:"RequestItems"`
	// batchKeys are a BatchGetItem's partition keys on the data table.
	batchKeys []string
}

// keyCondition finds "<pk> = :value" in a key condition.
var keyCondition = regexp.MustCompile(`(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)`)

// leadingKeys are the partition key values a request touches (the data
// table's partition key is pk).
func (r dataRequest) leadingKeys(op string) []string {
	s := func(v map[string]any) string { str, _ := v["S"].(string); return str }
	switch op {
	case "GetItem", "DeleteItem", "UpdateItem":
		return []string{s(r.Key["pk"])}
	case "PutItem":
		return []string{s(r.Item["pk"])}
	case "Query":
		for _, m := range keyCondition.FindAllStringSubmatch(r.KeyConditionExpression, -1) {
			name := m[1]
			if n, ok := r.ExpressionAttributeNames[name]; ok {
				name = n
			}
			if name == "pk" || (r.IndexName != "" && name == "gsi1pk") {
				return []string{s(r.ExpressionAttributeValues[m[2]])}
			}
		}
	case "BatchGetItem":
		return r.batchKeys
	}
	return nil // Scan, batch writes, transactions: no single leading key
}

// batchGetKeys reads the partition keys a BatchGetItem asks of table (IAM
// holds each of them to dynamodb:LeadingKeys); the request then counts
// as one on table.
func (r *dataRequest) batchGetKeys(body []byte, table string) {
	var batch struct {
		RequestItems map[string]struct {
			Keys []map[string]map[string]any `json:"Keys"`
		} `json:"RequestItems"`
	}
	if json.Unmarshal(body, &batch) != nil {
		return
	}
	items, ok := batch.RequestItems[table]
	if !ok {
		return
	}
	r.TableName = table
	for _, k := range items.Keys {
		v, _ := k["pk"]["S"].(string)
		r.batchKeys = append(r.batchKeys, v)
	}
}
