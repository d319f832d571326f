// Package strictjson decodes closed JSON objects: ones whose schema allows
// no key but its own. encoding/json's DisallowUnknownFields is not enough
// for that, because it matches keys case-insensitively ("Issuer" fills
// issuer) and lets a repeated key overwrite the first.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Decode decodes the JSON object data into v, a pointer to a struct whose
// fields carry json tags. A key that is not exactly the name of one of
// those fields, or that appears twice, is an error naming it. A JSON null
// leaves v unchanged, as encoding/json does.
func Decode(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	if err := checkKeys(data, fieldNames(reflect.TypeOf(v).Elem())); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("data after the JSON object")
	}
	return nil
}

func checkKeys(data []byte, names map[string]bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return fmt.Errorf("want a JSON object, got %s", describe(t))
	}
	seen := make(map[string]bool, len(names))
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		switch {
		case !names[key]:
			return fmt.Errorf("unknown field %q", key)
		case seen[key]:
			return fmt.Errorf("field %q appears twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

func describe(t json.Token) string {
	switch t.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

var names sync.Map // reflect.Type → map[string]bool

// fieldNames returns the JSON names of t's fields, as encoding/json names
// them, including those promoted from embedded structs.
func fieldNames(t reflect.Type) map[string]bool {
	if m, ok := names.Load(t); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			for k := range fieldNames(f.Type) {
				m[k] = true
			}
		case !f.IsExported():
		case tag != "":
			m[tag] = true
		default:
			m[f.Name] = true
		}
	}
	names.Store(t, m)
	return m
}
