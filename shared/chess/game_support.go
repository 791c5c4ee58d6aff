package chess

import "fmt"

// Text forms used by the game reducer (shared/game), whose stored state and
// views spell colours as the API does.

// MarshalText implements encoding.TextMarshaler: "white" or "black", so a
// Color is a JSON string (and a valid JSON object key).
func (c Color) MarshalText() ([]byte, error) {
	if c > Black {
		return nil, fmt.Errorf("chess: invalid colour %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; it accepts exactly
// "white" and "black".
func (c *Color) UnmarshalText(text []byte) error {
	switch string(text) {
	case "white":
		*c = White
	case "black":
		*c = Black
	default:
		return fmt.Errorf("chess: colour %q is not \"white\" or \"black\"", text)
	}
	return nil
}
