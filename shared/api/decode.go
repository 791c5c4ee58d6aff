package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// maxBodyBytes is the largest request body accepted (SPEC §5: larger → 413).
const maxBodyBytes = 64 << 10

// readBody reads the request body up to maxBodyBytes. A larger body is an
// *apiError with status 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errBodyTooLarge
		}
		return nil, errBadRequest("invalid_body", "", "요청 본문을 읽을 수 없어요")
	}
	return body, nil
}

// decodeBody reads the body (413 past the limit) and decodes it strictly.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	return decodeStrict(body, v, allowEmpty)
}

// decodeStrict decodes a JSON object into v (a pointer to a struct) and
// rejects what the API does not accept, naming the offending field by its
// dotted path: unknown fields at any depth (json.RawMessage fields are left
// to their own decoders), wrong types, trailing data. An empty body decodes
// as {} when allowEmpty is set.
func decodeStrict(body []byte, v any, allowEmpty bool) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		if allowEmpty {
			return nil
		}
		return errBadRequest("invalid_json", "", "요청 본문이 비어 있어요")
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return errBadRequest("invalid_json", "", "요청 본문이 올바른 JSON이 아니에요")
	}
	if dec.More() {
		return errBadRequest("invalid_json", "", "요청 본문 뒤에 다른 내용이 있어요")
	}
	if _, ok := generic.(map[string]any); !ok {
		return errBadRequest("invalid_json", "", "요청 본문은 JSON 객체여야 해요")
	}
	if path := unknownField(generic, reflect.TypeOf(v).Elem(), ""); path != "" {
		return errBadRequest("unknown_field", path, "알 수 없는 필드예요: "+path)
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			field := typeErr.Field
			return errBadRequest("invalid_field", field, fmt.Sprintf("%s 필드의 형식이 맞지 않아요 (%s 필요)", field, jsonKind(typeErr.Type)))
		}
		return errBadRequest("invalid_json", "", "요청 본문이 올바른 JSON이 아니에요")
	}
	return nil
}

// unknownField walks a decoded JSON value alongside the Go type it will be
// decoded into and returns the dotted path of the first key the type does
// not have, or "".
func unknownField(value any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(json.RawMessage(nil)) {
		return "" // decoded (strictly) later by its owner
	}
	switch v := value.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "" // a type error; json.Unmarshal names it
		}
		fields := jsonFields(t)
		for key, child := range v {
			ft, ok := fields[key]
			if !ok {
				return joinPath(path, key)
			}
			if p := unknownField(child, ft, joinPath(path, key)); p != "" {
				return p
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return ""
		}
		for i, child := range v {
			if p := unknownField(child, t.Elem(), joinPath(path, strconv.Itoa(i))); p != "" {
				return p
			}
		}
	}
	return ""
}

// jsonFields maps the JSON names of a struct's exported fields to their types
// (matching encoding/json's exact-name rules; embedded structs flattened).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		// Embedded structs (exported or not) contribute their fields.
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true/false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "정수"
	case reflect.Float32, reflect.Float64:
		return "숫자"
	case reflect.String:
		return "문자열"
	case reflect.Slice, reflect.Array:
		return "배열"
	}
	return "객체"
}
