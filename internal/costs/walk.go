package costs

// Walk calls fn with each prefix and its cost, in the order of the
// prefixes as text ("1" before "10" before "2"), until fn returns false.
// It holds one prefix at a time, so a card of a million prefixes is shown
// a page at a time without copying it.
func (t *Table) Walk(fn func(prefix string, cost int64) bool) {
	if t == nil || len(t.nodes) == 0 {
		return
	}
	var buf [16]byte
	t.walk(0, buf[:0], fn)
}

func (t *Table) walk(at int32, prefix []byte, fn func(string, int64) bool) bool {
	if nd := &t.nodes[at]; nd.set && !fn(string(prefix), nd.cost) {
		return false
	}
	for d := 0; d < 10; d++ {
		if next := t.nodes[at].next[d]; next != 0 {
			if !t.walk(next, append(prefix, byte('0'+d)), fn) {
				return false
			}
		}
	}
	return true
}
