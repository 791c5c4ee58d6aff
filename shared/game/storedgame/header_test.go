package storedgame

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"chessapi/shared/game"
)

// headerLines returns the keys of the header lines of a text record.
func headerLines(t testing.TB, rec []byte) []string {
	t.Helper()
	if rec[0] != formatText {
		t.Fatalf("not a text record: format %d", rec[0])
	}
	end := headerLength(rec[1:])
	var keys []string
	for _, line := range strings.Split(string(rec[1:1+end]), "\n") {
		if k, _, ok := strings.Cut(line, " "); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestHeaderTable: Encode writes the lines in the table's order, every
// field of the table is written by some test game or record (so the
// round-trip tests and the fuzzer's seeds exercise each of them), and a
// state with nothing set still gets every required line.
func TestHeaderTable(t *testing.T) {
	written := map[string]bool{}
	check := func(name string, rec []byte) {
		last := -1
		for _, k := range headerLines(t, rec) {
			i, ok := header.index[k]
			if !ok {
				t.Fatalf("%s: line %q is not in the table", name, k)
			}
			if i <= last {
				t.Errorf("%s: line %q out of the table's order", name, k)
			}
			last = i
			written[k] = true
		}
	}
	states := sampleStates(t)
	for _, name := range sortedNames(states) {
		check(name, Encode(states[name]))
	}
	paths, _ := filepath.Glob(filepath.Join("testdata", "records", currentWriter, "*.stored"))
	for _, p := range paths {
		rec, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		check(p, rec)
	}
	for _, f := range header.fields {
		if !written[f.key] {
			t.Errorf("header field %s is written by no test game or record", f.key)
		}
	}

	empty := map[string]bool{}
	for _, k := range headerLines(t, Encode(&game.State{})) {
		empty[k] = true
	}
	for _, f := range header.fields {
		if f.mustHave && !empty[f.key] {
			t.Errorf("required header field %s is left out of an empty state's header", f.key)
		}
	}
}

// TestHeaderFieldsAreIndependent: taking one optional line out of a
// header changes only that line of the header written back (it comes back
// as an empty state writes it, or not at all). So each line's reader sets
// its own field, and no other line's writer reads that field.
func TestHeaderFieldsAreIndependent(t *testing.T) {
	zeroLines := map[string]string{}
	for _, line := range splitLines(header.appendHeader(nil, &game.State{})) {
		k, _, _ := strings.Cut(line, " ")
		zeroLines[k] = line
	}
	states := sampleStates(t)
	for _, name := range sortedNames(states) {
		h := header.appendHeader(nil, states[name])
		base := &game.State{}
		if _, err := header.parseHeader(string(h), base); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines := splitLines(header.appendHeader(nil, base))
		for i, line := range lines {
			key, _, _ := strings.Cut(line, " ")
			if header.fields[header.index[key]].mustHave || key == "r" || strings.HasPrefix(key, "r.rating.") {
				continue // required; or one of the lines that make a result (one rating change for both sides)
			}
			want := append([]string{}, lines[:i]...)
			if zero, ok := zeroLines[key]; ok {
				want = append(want, zero)
			}
			want = append(want, lines[i+1:]...)
			without := strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "") + "\n"
			s := &game.State{}
			if _, err := header.parseHeader(without, s); err != nil {
				t.Fatalf("%s without %s: %v", name, key, err)
			}
			if got := splitLines(header.appendHeader(nil, s)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: taking line %q out changed more than its own line:\n got: %q\nwant: %q", name, key, got, want)
			}
		}
	}
}

// splitLines returns the lines of a header, each with its newline, without
// the empty line that ends it.
func splitLines(h []byte) []string {
	lines := strings.SplitAfter(string(h[:len(h)-1]), "\n")
	return lines[:len(lines)-1]
}

// FuzzHeader drives the header table with arbitrary text: parsing never
// panics and fails only with a *DecodeError, and what parses writes a
// header that parses back to the same fields, and writes itself again byte
// for byte (a line the table leaves out carries the value the decoder
// assumes: see normalised).
func FuzzHeader(f *testing.F) {
	states := sampleStates(f)
	for _, name := range sortedNames(states) {
		rec := Encode(states[name])
		f.Add(rec[1 : 1+headerLength(rec[1:])])
	}
	f.Add([]byte("sv 2\nid \\\\x\\n\nw.name a b\\n\nr -1 aborted 5\nr.rating.black 1 2\n\n"))
	f.Add([]byte("invite open\nsf rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nn 518\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &game.State{}
		if _, err := header.parseHeader(string(data), s); err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("parseHeader error %v is not a *DecodeError", err)
			}
			return
		}
		b := header.appendHeader(nil, s)
		again := &game.State{}
		rest, err := header.parseHeader(string(b), again)
		if err != nil || len(rest) != 0 {
			t.Fatalf("parseHeader(appendHeader(s)) = %q, %v\nheader:\n%s", rest, err, b)
		}
		if !reflect.DeepEqual(normalised(again), normalised(s)) {
			t.Fatalf("fields differ after a round trip\n got: %+v\nwant: %+v\nheader:\n%s", again, s, b)
		}
		if b2 := header.appendHeader(nil, again); !bytes.Equal(b2, b) {
			t.Fatalf("header written again differs:\n%s\nwas:\n%s", b2, b)
		}
	})
}

// normalised is s with the values that Encode leaves out as the decoder
// reads them back: no StartFEN when it is the variant's start (Restore
// derives it), no invite mode when it is the open default (Restore fills
// it in).
func normalised(s *game.State) *game.State {
	c := *s
	if c.StartFEN != "" && !c.CustomStart() {
		c.StartFEN = ""
	}
	if c.Invite.Mode == game.InviteOpen {
		c.Invite.Mode = ""
	}
	return &c
}
