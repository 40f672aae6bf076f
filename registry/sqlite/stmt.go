package sqlite

import (
	"context"
	"database/sql"
)

// SQLite spends much of a small query parsing it, so read statements are
// prepared once per query text and reused (database/sql prepares them
// again on each pooled connection as needed). The set of texts is fixed
// by the code, so the cache stays small. Writes are cached only inside
// write transactions (txExec, txQueryRow), which BEGIN IMMEDIATE has made
// the one writer: a cached statement that writes outside one was seen to
// fail with SQLITE_BUSY instead of waiting under load. Parsing inside a
// transaction is time every other writer waits for.

func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// errRow is a *sql.Row stand-in for a statement that failed to prepare.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (s *Store) queryRow(ctx context.Context, query string, args ...any) scanner {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// Writers are serialised in the process with wmu before they reach
// SQLite: SQLite's own busy handler makes a waiting writer sleep in growing
// steps (up to 100 ms), which turns contention into long tail latencies.
// Other processes on the same file still wait through busy_timeout.

func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.db.ExecContext(ctx, query, args...)
}

// writeRow runs a single-row write that returns a row (UPDATE … RETURNING).
// The caller scans the row, then calls unlock.
func (s *Store) writeRow(ctx context.Context, query string, args ...any) (row *sql.Row, unlock func()) {
	s.wmu.Lock()
	return s.db.QueryRowContext(ctx, query, args...), s.wmu.Unlock
}

// locked is the database as a writer outside a transaction sees it.
type locked struct{ s *Store }

func (l locked) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return l.s.exec(ctx, query, args...)
}

// begin starts a write transaction (BEGIN IMMEDIATE); done ends it and
// releases the writer lock, after Commit or Rollback.
func (s *Store) begin(ctx context.Context) (*sql.Tx, func(), error) {
	s.wmu.Lock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		s.wmu.Unlock()
		return nil, nil, err
	}
	return tx, func() { tx.Rollback(); s.wmu.Unlock() }, nil
}

// txExec runs a statement in a write transaction, prepared once per
// connection (Tx.StmtContext reuses what the connection prepared before).
func (s *Store) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// txQueryRow is txExec for a statement that returns a row.
func (s *Store) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) scanner {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// collect scans every row of a query with scan.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
