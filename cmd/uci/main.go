// Command uci runs the engine as a UCI engine on standard input and output,
// for chess GUIs and match runners (cmd/match).
//
//	go run ./cmd/uci            # then type: uci, position startpos, go movetime 1000
//	go run ./cmd/uci bench [D]  # fixed-depth search signature: total nodes and nps
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"chessapi/shared/engine"
	"chessapi/shared/engine/uci"
)

func main() {
	if len(os.Args) > 1 {
		if os.Args[1] != "bench" || len(os.Args) > 3 {
			fmt.Fprintln(os.Stderr, "usage: uci [bench [depth]]")
			os.Exit(2)
		}
		uci.NewSession(os.Stdout, engine.Options{}).Handle(strings.Join(os.Args[1:], " "))
		return
	}
	if err := uci.Run(context.Background(), os.Stdin, os.Stdout, engine.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "uci:", err)
		os.Exit(1)
	}
}
