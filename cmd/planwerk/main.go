// Command planwerk runs the Planwerk service and its administration commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"planwerk/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := app.Run(ctx, os.Args[1:], app.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	switch {
	case err == nil:
	case errors.Is(err, app.ErrUsage):
		os.Exit(2) // Run has said what was wrong, with a short usage
	default:
		fmt.Fprintln(os.Stderr, "planwerk:", err)
		os.Exit(1)
	}
}
