// Command uci runs the engine as a UCI engine on standard input and output,
// for chess GUIs and match runners (cmd/match).
//
//	go run ./cmd/uci            # then type: uci, position startpos, go movetime 1000
//	go run ./cmd/uci bench [D]  # fixed-depth search signature: total nodes and nps
//
// The bench signature at the default depth 10 is asserted by this command's
// test and by shared/engine's (docs/engine.md).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"chessapi/shared/engine"
	"chessapi/shared/engine/uci"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command with its arguments and streams; it returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] != "bench" || len(args) > 2 {
			fmt.Fprintln(stderr, "usage: uci [bench [depth]]")
			return 2
		}
		uci.NewSession(stdout, engine.Options{HashMB: 1}).Handle(strings.Join(args, " "))
		return 0
	}
	if err := uci.Run(context.Background(), stdin, stdout, engine.Options{}); err != nil {
		fmt.Fprintln(stderr, "uci:", err)
		return 1
	}
	return 0
}
