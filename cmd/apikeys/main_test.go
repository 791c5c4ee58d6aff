package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/apikey"
	"chessapi/shared/store/boltstore"
)

// created is the clock of every command in these tests.
var created = time.Date(2026, 11, 29, 9, 15, 0, 0, time.UTC)

// runCLI runs one command line; env stands in for the environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := cli{stdout: &out, stderr: &errOut, getenv: func(k string) string { return env[k] }, now: func() time.Time { return created }, random: rand.Reader}
	code = c.run(context.Background(), args)
	return code, out.String(), errOut.String()
}

// secretOf is the part of a key that must never be shown again.
func secretOf(key string) string { return key[len("ak_")+apikey.IDLen+1:] }

// lifecycle creates two keys, lists them, revokes one, and checks each
// output; store is the flags naming the store. It returns the keys.
func lifecycle(t *testing.T, env map[string]string, store ...string) (kept, revoked apikey.Key) {
	t.Helper()
	cmd := func(args ...string) []string { return append(append([]string{}, store...), args...) }
	create := func(name string, flags ...string) apikey.Key {
		code, out, errOut := runCLI(t, env, cmd(append([]string{"create", "-name", name}, flags...)...)...)
		if code != exitOK {
			t.Fatalf("create %s: exit %d\n%s", name, code, errOut)
		}
		k, err := apikey.Parse(strings.TrimSuffix(out, "\n"))
		if err != nil || strings.Count(out, "\n") != 1 {
			t.Fatalf("create printed %q on stdout; want the key alone on one line", out)
		}
		if !strings.Contains(errOut, k.ID) || strings.Contains(errOut, secretOf(k.String())) {
			t.Errorf("create's stderr %q: want the id, never the secret", errOut)
		}
		return k
	}
	kept = create("Partner One", "-rate", "3", "-daily", "500", "-inflight", "4")
	revoked = create("파트너 둘")

	code, out, errOut := runCLI(t, env, cmd("revoke", revoked.ID)...)
	if code != exitOK || !strings.Contains(out, "revoked "+revoked.ID) {
		t.Fatalf("revoke: exit %d %q %q", code, out, errOut)
	}
	// A whole key pasted in stands for its id; revoking again changes nothing.
	code, out, _ = runCLI(t, env, cmd("revoke", revoked.String())...)
	if code != exitOK || !strings.Contains(out, "already revoked at 2026-11-29T09:15:00Z") || strings.Contains(out, secretOf(revoked.String())) {
		t.Errorf("second revoke: exit %d %q", code, out)
	}

	code, out, errOut = runCLI(t, env, cmd("list")...)
	if code != exitOK {
		t.Fatalf("list: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("list printed %q; want a header and two keys", out)
	}
	for _, want := range [][]string{
		{kept.ID, "Partner One", " 3 ", " 500 ", " 4 ", "2026-11-29T09:15:00Z", " -"},
		{revoked.ID, "파트너 둘", " 5 ", " 10000 ", " 2 ", "2026-11-29T09:15:00Z  2026-11-29T09:15:00Z"},
	} {
		line := ""
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, want[0]) {
				line = l
			}
		}
		for _, part := range want {
			if !strings.Contains(line+" ", part) {
				t.Errorf("list line %q lacks %q", line, part)
			}
		}
	}
	for _, k := range []apikey.Key{kept, revoked} {
		if strings.Contains(out, secretOf(k.String())) {
			t.Errorf("list shows a secret")
		}
	}

	code, out, _ = runCLI(t, env, cmd("list", "-json")...)
	var listed []keyJSON
	if err := json.Unmarshal([]byte(out), &listed); code != exitOK || err != nil || len(listed) != 2 {
		t.Fatalf("list -json: exit %d, %v\n%s", code, err, out)
	}
	for _, k := range listed {
		wantRevoked := k.ID == revoked.ID
		wantInFlight := map[bool]int64{true: 2, false: 4}[wantRevoked]
		if (k.RevokedAt != nil) != wantRevoked || !k.CreatedAt.Equal(created) || k.InFlight != wantInFlight {
			t.Errorf("list -json entry %+v", k)
		}
	}
	return kept, revoked
}

// TestEmbeddedStore: the commands on the local server's file, and the keys
// they make are the ones the server's checker accepts (or refuses, once
// revoked).
func TestEmbeddedStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chess.db")
	kept, revoked := lifecycle(t, nil, "-data", path)

	store, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	checker, err := apikey.NewChecker(apikey.Options{Store: store, Counter: apikey.NewMemoryCounter()})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := checker.Admit(context.Background(), kept.String()); err != nil || a.KeyID != kept.ID {
		t.Errorf("the created key: %q, %v; want accepted", a.KeyID, err)
	}
	if _, err := checker.Admit(context.Background(), revoked.String()); !errors.Is(err, apikey.ErrRevoked) {
		t.Errorf("the revoked key: %v; want ErrRevoked", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secretOf(kept.String()))) {
		t.Error("the file holds a key's secret")
	}
}

// TestEmbeddedStoreInUse: while the local server holds the file, -data
// fails clearly (after the store's lock timeout).
func TestEmbeddedStoreInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chess.db")
	store, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	code, _, errOut := runCLI(t, nil, "-data", path, "list")
	if code != exitFail || !strings.Contains(errOut, "stop it first") {
		t.Errorf("list on a file in use: exit %d %q; want 1 and advice to stop the server", code, errOut)
	}
}

// TestDynamoDB: the commands on the data table (moto), named by -table or
// by DATA_TABLE.
func TestDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("needs moto; skipped with -short")
	}
	endpoint := emulatortest.Start(t, emulator.Moto)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", emulator.Region)
	table := emulatortest.NewDataTable(t, endpoint)
	lifecycle(t, nil, "-endpoint", endpoint, "-table", table)

	other := emulatortest.NewDataTable(t, endpoint)
	kept, _ := lifecycle(t, map[string]string{"DATA_TABLE": other}, "-endpoint", endpoint)
	code, out, _ := runCLI(t, nil, "-endpoint", endpoint, "-table", table, "list")
	if code != exitOK || strings.Contains(out, kept.ID) {
		t.Errorf("DATA_TABLE's key is listed in the -table table: exit %d\n%s", code, out)
	}
	code, _, errOut := runCLI(t, nil, "-endpoint", endpoint, "-table", table, "revoke", "aaaaaaaaaaaaaaaa")
	if code != exitFail || !strings.Contains(errOut, "no key aaaaaaaaaaaaaaaa") {
		t.Errorf("revoke of an unknown id: exit %d %q; want 1, no key", code, errOut)
	}
}

// TestUsageErrors: every mistake on the command line is exit 2 with a
// message naming the flag or argument, before any store is opened (the
// file is not even created).
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "never", "chess.db")
	k, _ := apikey.Generate(rand.Reader)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no command", nil, []string{"-data", path}, "no command"},
		{"unknown command", nil, []string{"-data", path, "delete"}, `unknown command "delete"`},
		{"unknown global flag", nil, []string{"-region", "x", "list"}, "-region"},
		{"create without a name", nil, []string{"-data", path, "create"}, "-name is empty"},
		{"create with a control character", nil, []string{"-data", path, "create", "-name", "a\tb"}, "-name contains"},
		{"rate zero", nil, []string{"-data", path, "create", "-name", "p", "-rate", "0"}, "-rate = 0 is not between 1 and 1000"},
		{"daily too large", nil, []string{"-data", path, "create", "-name", "p", "-daily", "2000000000"}, "-daily = 2000000000"},
		{"inflight too large", nil, []string{"-data", path, "create", "-name", "p", "-inflight", "21"}, "-inflight = 21 is not between 1 and 20"},
		{"rate not a number", nil, []string{"-data", path, "create", "-name", "p", "-rate", "many"}, "-rate"},
		{"create with an argument", nil, []string{"-data", path, "create", "-name", "p", "extra"}, `"extra"`},
		{"list with an argument", nil, []string{"-data", path, "list", "all"}, `"all"`},
		{"revoke without id", nil, []string{"-data", path, "revoke"}, "exactly one key id"},
		{"revoke a malformed key", nil, []string{"-data", path, "revoke", k.String() + "x"}, "not a key id"},
		{"data and table", nil, []string{"-data", path, "-table", "t", "list"}, "-data is the local file"},
		{"no store", nil, []string{"list"}, "no store"},
		{"bad endpoint", map[string]string{"DATA_TABLE": "t"}, []string{"-endpoint", "localhost:8000", "list"}, `-endpoint "localhost:8000"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.env, tt.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "usage: apikeys") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q and the usage", code, out, errOut, tt.want)
			}
			if strings.Contains(errOut, secretOf(k.String())) {
				t.Errorf("the message echoes a key's secret")
			}
		})
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a usage error opened the store (%v)", err)
	}
	if code, _, errOut := runCLI(t, nil, "-h"); code != exitUsage || !strings.HasPrefix(errOut, "usage: apikeys") {
		t.Errorf("-h: exit %d %q; want 2 and the usage", code, errOut)
	}
}
