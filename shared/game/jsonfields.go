package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Strict JSON object reading for request input (options, action payloads):
// every key is seen, so unknown and duplicate keys can be refused with the
// exact dotted path, and each value is checked for its own type.

type jsonField struct {
	key   string
	path  string // dotted path of the value, e.g. "payload.to"
	value json.RawMessage
}

// objectFields returns the members of the JSON object raw in order. An empty
// raw or JSON null is an empty object. Anything else that is not exactly one
// object, or an object with a repeated key, is an *InputError at path.
func objectFields(raw json.RawMessage, path string) ([]jsonField, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	notObject := inputError(path, "JSON 객체여야 해요", nil)
	if raw[0] != '{' {
		return nil, notObject
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, notObject
	}
	var fields []jsonField
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, inputError(path, "JSON 형식이 올바르지 않아요", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, inputError(path, "JSON 형식이 올바르지 않아요", nil)
		}
		fieldPath := path + "." + key
		if seen[key] {
			return nil, inputError(fieldPath, "같은 항목이 두 번 있어요", nil)
		}
		seen[key] = true
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, inputError(fieldPath, "JSON 형식이 올바르지 않아요", err)
		}
		fields = append(fields, jsonField{key: key, path: fieldPath, value: value})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, inputError(path, "JSON 형식이 올바르지 않아요", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, inputError(path, "JSON 객체 뒤에 다른 내용이 있어요", err)
	}
	return fields, nil
}

func unknownField(f jsonField) error {
	return inputError(f.path, "알 수 없는 항목이에요", nil)
}

func (f jsonField) isNull() bool { return string(bytes.TrimSpace(f.value)) == "null" }

// stringValue decodes a JSON string member.
func (f jsonField) stringValue() (string, error) {
	var s string
	if f.isNull() || json.Unmarshal(f.value, &s) != nil {
		return "", inputError(f.path, "문자열이어야 해요", nil)
	}
	return s, nil
}

// boolValue decodes a JSON true/false member.
func (f jsonField) boolValue() (bool, error) {
	var b bool
	if f.isNull() || json.Unmarshal(f.value, &b) != nil {
		return false, inputError(f.path, "true 또는 false여야 해요", nil)
	}
	return b, nil
}

// intValue decodes a JSON integer member.
func (f jsonField) intValue() (int, error) {
	var n int
	if f.isNull() || json.Unmarshal(f.value, &n) != nil {
		return 0, inputError(f.path, "정수여야 해요", nil)
	}
	return n, nil
}
