package sqlite

// ForgetWALHeader makes s confirm its sync state with data_version only,
// as when the WAL index cannot be read (until its kept connection is
// replaced). Call it after a first SyncState.
func ForgetWALHeader(s *Store) {
	c := &s.syncCache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unmapForTest()
	if c.shm != nil {
		c.shm.Close()
		c.shm = nil
	}
}

// ForgetWALMapping makes s read the WAL-index header with a system call,
// as where the file cannot be mapped. Call it after a first SyncState.
func ForgetWALMapping(s *Store) {
	c := &s.syncCache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unmapForTest()
}

// unmapForTest drops c's mapping of the -shm file; c.mu is held.
func (c *syncCache) unmapForTest() {
	if c.shmMap != nil {
		unmapHeader(c.shmMap)
		c.shmMap = nil
	}
}

// WALHeaderMapped reports whether s reads the WAL-index header from a
// mapping.
func WALHeaderMapped(s *Store) bool {
	c := &s.syncCache
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shmMap != nil
}
