// Package cli is the livecheck command: livecheck.Main and livecheck.Run
// call it with the systems a program knows. One file per subcommand
// (list, check, prefix, replay, report, debug, merge); the flags that
// check and prefix share, and those of the commands that read a trace,
// are declared once in flags.go. No checking logic lives here: the
// command parses, calls packages check, shard and traceview, and prints.
package cli
