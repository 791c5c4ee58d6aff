package credential

import "strings"

// Redacted stands for a masked credential's random part.
const Redacted = "[REDACTED]"

// minRedacted is how many URL-safe characters after a prefix make a run a
// credential to mask even when it is shorter than a whole one (a line cut
// short still holds a usable piece of a token).
const minRedacted = 20

// freeText are the kinds recognised by prefix inside any text; every such
// prefix ends in '_', where the scan looks for them.
var freeText = func() []Kind {
	var out []Kind
	for _, k := range Kinds() {
		if k.format().inFreeText {
			out = append(out, k)
		}
	}
	return out
}()

// MayContain is a cheap test that s may hold a credential Redact would
// mask (false means Redact(s) == s).
func MayContain(s string) bool {
	if len(s) < 3+minRedacted {
		return false
	}
	for i := strings.IndexByte(s, '_'); i >= 0; {
		if _, _, ok := prefixEndingAt(s, i); ok {
			return true
		}
		j := strings.IndexByte(s[i+1:], '_')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// Redact returns s with every credential of a kind recognised in free
// text (seat tokens, player tokens, API keys) replaced by its prefix and
// Redacted: "Bearer st_[REDACTED]". A credential there is the kind's
// prefix followed by at least 20 URL-safe characters (base64url, which
// holds every such kind's alphabet and separator):
//
//   - where the prefix does not continue a word of letters and digits
//     ("last_state_with_a_long_name" is left alone), or follows a %XX
//     escape ("token%3Dst_…");
//   - anywhere, when the run is as long as a whole credential of the kind
//     (no text before it makes a whole token safe to show).
//
// Link and invite codes have no prefix and are not recognised here; a
// logger masks them by attribute name (LogNames).
func Redact(s string) string {
	if !MayContain(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		u := strings.IndexByte(s[i:], '_')
		if u < 0 {
			break
		}
		u += i
		k, start, ok := prefixEndingAt(s, u)
		if !ok || start < last {
			i = u + 1
			continue
		}
		end := u + 1
		for end < len(s) && isBase64URL(s[end]) {
			end++
		}
		run := end - (u + 1)
		if run >= minRedacted && (wordStart(s, start) || run >= k.Len()-len(k.Prefix())) {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:start])
			b.WriteString(k.Prefix())
			b.WriteString(Redacted)
			last, i = end, end
			continue
		}
		i = u + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// prefixEndingAt returns the free-text kind whose prefix ends at s[u] (an
// underscore), and where the prefix starts.
func prefixEndingAt(s string, u int) (Kind, int, bool) {
	for _, k := range freeText {
		p := k.Prefix()
		start := u + 1 - len(p)
		if start >= 0 && s[start:u+1] == p {
			return k, start, true
		}
	}
	return 0, 0, false
}

// wordStart reports whether a credential may start at s[i]: not inside a
// word of letters and digits, or right after a %XX escape.
func wordStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	return !alnum || i >= 3 && s[i-3] == '%'
}
