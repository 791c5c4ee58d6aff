package main

import (
	"bytes"
	"strings"
	"testing"
)

// benchSignature is what `go run ./cmd/uci bench` prints as its node total
// (depth 10, 13 positions, the default evaluation: the network). It changes
// only when the search or the evaluation does; update it, and
// shared/engine's benchSignature, on purpose.
const benchSignature = "bench depth 10 positions 13 nodes 1093671 "

func TestBenchSignature(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"bench"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("run(bench) = %d; want 0 (stderr %q)", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, benchSignature) {
		t.Errorf("run(bench) last line = %q; want it to start with %q", last, benchSignature)
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		args     []string
		stdin    string
		wantCode int
		wantOut  []string // substrings of stdout, in order
		wantErr  string
	}{
		{nil, "uci\nisready\nposition startpos\ngo depth 2\nquit\n", 0, []string{"uciok", "readyok", "bestmove "}, ""},
		{[]string{"bench", "2"}, "", 0, []string{"info string position 13:", "bench depth 2 positions 13 nodes "}, ""},
		{[]string{"bench", "x"}, "", 0, []string{"info string error: bench: depth"}, ""},
		{[]string{"perft"}, "", 2, nil, "usage: uci [bench [depth]]"},
		{[]string{"bench", "2", "3"}, "", 2, nil, "usage:"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		code := run(tc.args, strings.NewReader(tc.stdin), &out, &errOut)
		if code != tc.wantCode || !strings.Contains(errOut.String(), tc.wantErr) {
			t.Errorf("run(%q) = %d, stderr %q; want %d, stderr containing %q", tc.args, code, errOut.String(), tc.wantCode, tc.wantErr)
		}
		rest := out.String()
		for _, want := range tc.wantOut {
			i := strings.Index(rest, want)
			if i < 0 {
				t.Errorf("run(%q) stdout = %q; want %q (in order)", tc.args, out.String(), want)
				break
			}
			rest = rest[i+len(want):]
		}
	}
}
