// Package repocheck holds tests of the repository as a whole, read from its
// sources and documents rather than from one package's behaviour:
//
//   - every fuzzing command the documents give (`go test -fuzz FuzzXxx
//     ./pkg`, and the "(also `FuzzYyy`)" lists beside them) names exactly
//     one fuzz target of that package, as `go test -fuzz` requires, and
//     every `FuzzXxx` a document names exists;
//   - test machinery stays in test code: only packages whose name ends in
//     "test" (storetest, emulatortest...) import "testing" outside _test.go
//     files, and only tests and other such packages import them.
//
// It has no code of its own; `go test ./...` runs its tests with the rest.
package repocheck
