// Command empty does nothing: `make bench-startup` runs it next to sip as
// the floor of a Go program's start-up on the same machine (the runtime's
// own initialisation, no packages of ours or of anyone else).
package main

func main() {}
