package sqlite

// ForgetWALHeader makes s confirm its sync state with data_version only,
// as when the WAL index cannot be read (until its kept connection is
// replaced). Call it after a first SyncState.
func ForgetWALHeader(s *Store) {
	c := &s.syncCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shm != nil {
		c.shm.Close()
		c.shm = nil
	}
}
