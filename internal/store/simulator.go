package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// JournalSubmissions records in the simulator's journal that node handed
// these messages over. It returns the ids seen for the first time; the
// others were handed over before (by a node that died before recording the
// outcome) and are counted as deduplicated resubmissions.
func (s *Store) JournalSubmissions(ctx context.Context, node string, ids []string, at time.Time) (map[string]bool, error) {
	fresh := make(map[string]bool, len(ids))
	err := s.Write(ctx, func(tx *Tx) error {
		for start := 0; start < len(ids); start += 300 {
			chunk := ids[start:min(start+300, len(ids))]
			var b strings.Builder
			b.WriteString(`INSERT INTO simulator_journal (message_id, node, accepted_at) VALUES `)
			args := make([]any, 0, len(chunk)*3+1)
			tx.s.writeValues(&b, len(chunk), 3)
			for _, id := range chunk {
				args = append(args, id, node, ms(at))
			}
			args = append(args, node)
			fmt.Fprintf(&b, ` ON CONFLICT (message_id) DO UPDATE SET resubmissions = simulator_journal.resubmissions + 1,
				last_node = $%d RETURNING message_id, resubmissions`, len(chunk)*3+1)
			rows, err := tx.query(ctx, b.String(), args...)
			if err != nil {
				return fmt.Errorf("journal submissions: %w", err)
			}
			for rows.Next() {
				var id string
				var n int
				if err := rows.Scan(&id, &n); err != nil {
					rows.Close()
					return fmt.Errorf("journal submissions: %w", err)
				}
				fresh[id] = n == 0
			}
			if err := rows.Close(); err != nil {
				return fmt.Errorf("journal submissions: %w", err)
			}
		}
		return nil
	})
	return fresh, err
}
