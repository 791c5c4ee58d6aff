// Package genclient checks the Done-when of issue 13: a client generated
// from openapi.yaml by a generator (here ogen, one of the strictest) works
// against every route without hand fixes. The client in ./client is the
// generator's output, unedited; TestGeneratedClientIsCurrent regenerates it
// and fails when openapi.yaml changed without it, and TestEveryRoute drives
// a real local server through every operation with it.
//
// It is a module of its own so that the service does not depend on the
// generator or on the generated code's runtime.
package genclient

//go:generate go tool ogen --target ./client --package client --clean ../../openapi.yaml
