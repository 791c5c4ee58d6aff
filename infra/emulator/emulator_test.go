package emulator

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// startForTest starts kind, stopped when the test ends. (The wrappers of
// emulatortest cannot be used here: that package imports this one.)
func startForTest(t *testing.T, kind Kind) *Server {
	t.Helper()
	srv, err := Start(t.Context(), kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestStartServesDynamoDBAndStops(t *testing.T) {
	for _, kind := range []Kind{Moto, Dynalite} {
		t.Run(string(kind), func(t *testing.T) {
			srv, err := Start(t.Context(), kind)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
				t.Fatalf("Start(%s).URL = %q; want a loopback URL", kind, srv.URL)
			}
			if err := CreateGamesTable(t.Context(), srv.URL, "games"); err != nil {
				t.Fatal(err)
			}
			client := dynamodb.NewFromConfig(Config(srv.URL))
			out, err := client.ListTables(t.Context(), &dynamodb.ListTablesInput{})
			if err != nil {
				t.Fatalf("ListTables on %s: %v", kind, err)
			}
			if len(out.TableNames) != 1 || out.TableNames[0] != "games" {
				t.Fatalf("ListTables on %s = %v; want [games]", kind, out.TableNames)
			}
			if err := srv.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			// Stopped: nothing listens, and a second Close is harmless.
			addr := strings.TrimPrefix(srv.URL, "http://")
			if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				conn.Close()
				t.Errorf("%s still accepts connections on %s after Close", kind, addr)
			}
			if err := srv.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

func TestMissingToolIsToolMissingError(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing to find
	tests := []struct {
		kind        Kind
		tool        string
		wantInstall string
	}{
		{Moto, "moto_server", "pip install 'moto[server]'"},
		{Dynalite, "node", "Node.js"},
	}
	for _, tt := range tests {
		srv, err := Start(context.Background(), tt.kind)
		var missing *ToolMissingError
		if !errors.As(err, &missing) || missing.Tool != tt.tool || !strings.Contains(err.Error(), tt.wantInstall) {
			t.Errorf("Start(%s) without the tool = %v, %v; want a *ToolMissingError for %s mentioning %q", tt.kind, srv, err, tt.tool, tt.wantInstall)
		}
	}
}

func TestUnknownKindFails(t *testing.T) {
	if _, err := Start(context.Background(), Kind("localstack")); err == nil || !strings.Contains(err.Error(), `unknown kind "localstack"`) {
		t.Errorf("Start(localstack) error = %v; want it to name the unknown kind", err)
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{limit: 8}
	for _, s := range []string{"hello ", "world", ", again"} {
		b.Write([]byte(s))
	}
	if got := b.String(); got != "d, again" {
		t.Errorf("tailBuffer after writes = %q; want %q", got, "d, again")
	}
}
