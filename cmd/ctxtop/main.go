// Command ctxtop is a top for Linux context switches.
package main

import "github.com/ctxtop/ctxtop/internal/cli"

func main() { cli.Execute() }
