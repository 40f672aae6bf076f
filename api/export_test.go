package api

// Routes lists the methods and paths the server serves, for tests.
func (s *Server) Routes() [][2]string {
	var out [][2]string
	for _, r := range s.echo.Routes() {
		out = append(out, [2]string{r.Method, r.Path})
	}
	return out
}

// Allocated is allocated, for the tests outside the package.
func Allocated(f func()) uint64 { return allocated(f) }
