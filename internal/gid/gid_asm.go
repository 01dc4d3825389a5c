//go:build (amd64 || arm64) && !race

package gid

func current() uintptr
