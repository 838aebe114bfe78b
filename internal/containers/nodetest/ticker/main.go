// Command ticker wakes every 10 ms and does nothing else: a process that
// switches a little, forks nothing, and runs as a container's only
// program (static, no libc), for tests of what names a cgroup.
package main

import (
	"os"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		os.Stdout.WriteString(os.Args[1] + "\n")
	}
	for {
		time.Sleep(10 * time.Millisecond)
	}
}
