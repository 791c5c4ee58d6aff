package apispec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintCatches breaks openapi.yaml in one place at a time and checks that
// Lint (or loading) reports it.
func TestLintCatches(t *testing.T) {
	orig, err := os.ReadFile(File())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"no operationId", "      operationId: health\n", "", "no operationId"},
		{"no 429", `        "429": {$ref: "#/components/responses/TooManyRequests"}` + "\n        \"500\": {$ref: \"#/components/responses/Internal\"}\n        \"503\": {$ref: \"#/components/responses/Unavailable\"}\n  /v1/positions:",
			"        \"500\": {$ref: \"#/components/responses/Internal\"}\n        \"503\": {$ref: \"#/components/responses/Unavailable\"}\n  /v1/positions:", "no 429 response"},
		{"error body not the Error schema", "        \"404\": {$ref: \"#/components/responses/GameNotFound\"}\n        \"429\": {$ref: \"#/components/responses/TooManyRequests\"}\n        \"500\": {$ref: \"#/components/responses/Internal\"}\n        \"503\": {$ref: \"#/components/responses/Busy\"}\n  /v1/games/{id}/events:",
			"        \"404\":\n          description: x\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/GatewayMessage\"}\n              example: {message: x}\n        \"429\": {$ref: \"#/components/responses/TooManyRequests\"}\n        \"500\": {$ref: \"#/components/responses/Internal\"}\n        \"503\": {$ref: \"#/components/responses/Busy\"}\n  /v1/games/{id}/events:", "not the Error schema"},
		{"bare object", "    PlayerOrNull:", "        extra: {type: object}\n    PlayerOrNull:", "bare object"},
		{"open object", "    Player:\n      type: object\n      additionalProperties: false\n", "    Player:\n      type: object\n", "open object"},
		{"invalid example", "example: {status: ok, time: \"2026-11-29T12:00:00Z\"}", "example: {status: ok}", "invalid example"},
		{"YAML 1.1 boolean", `enum: [q, r, b, "n"]`, `enum: [q, r, b, n]`, `plain "n" is a boolean in YAML 1.1`},
		{"YAML anchor", "example: {status: ok, time: \"2026-11-29T12:00:00Z\"}", "example: &health {status: ok, time: \"2026-11-29T12:00:00Z\"}", "YAML anchor &health"},
		{"security scheme named like a schema", "    seatBearer:\n      type: http\n", "    seatToken:\n      type: http\n      scheme: bearer\n    seatBearer:\n      type: http\n", "named like the schema SeatToken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(orig), tt.old) {
				t.Fatalf("openapi.yaml no longer contains %q; update the test", tt.old)
			}
			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, []byte(strings.Replace(string(orig), tt.old, tt.new, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := LoadFile(path)
			var errs []error
			if err != nil {
				errs = []error{err}
			} else {
				errs = s.Lint()
			}
			if err := errors.Join(errs...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("lint of the broken file = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
