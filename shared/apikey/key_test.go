package apikey

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func TestGenerateParseRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		k, err := Generate(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		text := k.String()
		if len(text) != KeyLen || !strings.HasPrefix(text, "ak_"+k.ID+"_") || len(k.ID) != IDLen {
			t.Fatalf("key %q (id %q): wrong shape", text, k.ID)
		}
		if strings.Trim(text[3:], "abcdefghijklmnopqrstuvwxyz234567_") != "" {
			t.Fatalf("key %q has characters outside lowercase base32", text)
		}
		back, err := Parse(text)
		if err != nil || back != k {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", text, back, err, k)
		}
		if !k.Matches(k.Hash()) || len(k.Hash()) != 64 {
			t.Fatalf("key does not match its own hash %q", k.Hash())
		}
		if seen[k.ID] {
			t.Fatalf("id %s twice in 200 keys", k.ID)
		}
		seen[k.ID] = true
	}
}

// TestKnownKey pins the format: the same random bytes give the same text
// and hash forever (stored hashes depend on it).
func TestKnownKey(t *testing.T) {
	k, err := Generate(bytes.NewReader(bytes.Repeat([]byte{0x5a}, 42)))
	if err != nil {
		t.Fatal(err)
	}
	const want = "ak_ljnfuws2ljnfuws2_ljnfuws2ljnfuws2ljnfuws2ljnfuws2ljnfuws2ljnfuws2ljna"
	if k.String() != want {
		t.Errorf("key = %q; want %q", k.String(), want)
	}
	// SHA-256 of the text, in hex (sha256sum of the key without a newline).
	if h := k.Hash(); h != "7de59c37822365e49d87ec0ee498136af60f8fc3a92576f2546f1f5caea66b1b" {
		t.Errorf("Hash = %q", h)
	}
}

func TestGenerateRandomFailure(t *testing.T) {
	if _, err := Generate(iotest.ErrReader(errors.New("no entropy"))); err == nil || !strings.Contains(err.Error(), "no entropy") {
		t.Errorf("Generate with a failing source = %v; want its error", err)
	}
	if _, err := Generate(bytes.NewReader(make([]byte, 41))); err == nil {
		t.Error("Generate with 41 random bytes succeeded; it needs 42")
	}
}

func TestParseRejects(t *testing.T) {
	k, _ := Generate(rand.Reader)
	good := k.String()
	cases := map[string]string{
		"empty":                    "",
		"prefix only":              "ak_",
		"seat token":               "st_P1tE2NH9e3f6bwxiuLCdgx6UKnn6D4qyg3T_FxgvwqU",
		"upper case":               strings.ToUpper(good),
		"upper case prefix":        "AK_" + good[3:],
		"trailing blank":           good + " ",
		"leading blank":            " " + good[:len(good)-1],
		"one short":                good[:len(good)-1],
		"one long":                 good + "a",
		"separator moved":          good[:18] + "_" + good[18:19] + good[20:],
		"dash for separator":       good[:19] + "-" + good[20:],
		"digit 1 in id":            good[:3] + "1" + good[4:],
		"digit 8 in secret":        good[:25] + "8" + good[26:],
		"padding":                  good[:len(good)-1] + "=",
		"non-canonical last":       good[:len(good)-1] + "b", // the last character carries 1 bit ("a" or "q"); "b" sets an unused one
		"sample key of the events": "sample-partner-key-5f2c9e1a7b3d",
		"NUL":                      good[:10] + "\x00" + good[11:],
	}
	for name, text := range cases {
		if _, err := Parse(text); !errors.Is(err, ErrMalformedText) {
			t.Errorf("%s: Parse(%q) = %v; want ErrMalformedText", name, text, err)
		}
	}
}

func TestValidID(t *testing.T) {
	k, _ := Generate(rand.Reader)
	for id, want := range map[string]bool{
		k.ID: true, "": false, "bootstrap": false, k.ID + "a": false, strings.ToUpper(k.ID): false,
		"aaaaaaaaaaaaaaa1": false, "../../etc/passwd": false,
	} {
		if ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v; want %v", id, !want, want)
		}
	}
}

// FuzzParse: Parse never panics, accepts only texts that are exactly a
// key's String (one key, one text), and never puts the text in an error.
func FuzzParse(f *testing.F) {
	k, _ := Generate(bytes.NewReader(bytes.Repeat([]byte{1, 2, 3}, 14)))
	for _, s := range []string{k.String(), "", "ak_", "ak_aaaaaaaaaaaaaaaa_", strings.ToUpper(k.String()), k.String()[:71] + "b", k.String() + "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		key, err := Parse(text)
		if err != nil {
			// The very sentinel, so its text cannot depend on (quote) the input.
			if err != ErrMalformedText {
				t.Fatalf("Parse(%q) = %v; want ErrMalformedText itself", text, err)
			}
			return
		}
		if key.String() != text || !ValidID(key.ID) {
			t.Fatalf("Parse(%q) = %q (id %q): not the same text", text, key.String(), key.ID)
		}
		if !key.Matches(HashText(text)) {
			t.Fatalf("Parse(%q): the key does not match the hash of its text", text)
		}
	})
}
