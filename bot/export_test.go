package bot

// ParseCommand is parseCommand, for tests.
func ParseCommand(body string) (string, bool) {
	c, ok := parseCommand(body)
	return c.name + " " + c.arg, ok
}
