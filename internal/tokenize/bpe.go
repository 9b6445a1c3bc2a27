package tokenize

// Byte-pair encoding of one piece: start from its bytes (each a token in
// both vocabularies) and merge, again and again, the two adjacent parts
// whose concatenation is the token of the lowest rank, the leftmost of
// equals, until no adjacent two make a token. A short piece finds each
// merge by a scan of the pairs (quadratic, and cheapest for the few
// bytes of a word); a long one keeps the pairs in a heap ordered by rank
// then offset (n log n), so that a 100-KB run without a space stays fast.

// heapFrom is the length in bytes from which a piece merges with the
// heap. A variable so that the tests can run each way on every input.
var heapFrom = 64

// scratch is one count's reusable buffers.
type scratch struct {
	bounds []int32  // the parts' start offsets, then the piece's length
	pairs  []uint32 // pairs[k]: the rank of parts k and k+1 merged
	next   []int32
	prev   []int32
	heap   []uint64 // rank<<32 | offset
}

// merge returns the start offsets of piece's tokens followed by
// len(piece), in sc.bounds' memory. The piece is no token itself.
func (v ranks) merge(piece string, sc *scratch) []int32 {
	if len(piece) >= heapFrom {
		return v.mergeHeap(piece, sc)
	}
	return v.mergeScan(piece, sc)
}

func (v ranks) mergeScan(piece string, sc *scratch) []int32 {
	b := sc.bounds[:0]
	for i := 0; i <= len(piece); i++ {
		b = append(b, int32(i))
	}
	p := sc.pairs[:0]
	for i := 0; i+2 <= len(piece); i++ {
		p = append(p, v.rank(piece[i:i+2]))
	}
	for len(p) > 0 {
		k := 0
		for j := 1; j < len(p); j++ {
			if p[j] < p[k] {
				k = j
			}
		}
		if p[k] == noRank {
			break
		}
		b = append(b[:k+1], b[k+2:]...) // part k absorbs part k+1
		p = append(p[:k], p[k+1:]...)
		if k < len(p) {
			p[k] = v.rank(piece[b[k]:b[k+2]])
		}
		if k > 0 {
			p[k-1] = v.rank(piece[b[k-1]:b[k+1]])
		}
	}
	sc.bounds, sc.pairs = b, p
	return b
}

// mergeHeap merges as mergeScan does, keeping the parts as a linked
// list over their start offsets and the candidate merges in a min-heap.
// An entry is stale when its part's current pair has another rank (a
// pair of the same rank is the same bytes, so the same merge).
func (v ranks) mergeHeap(piece string, sc *scratch) []int32 {
	n := int32(len(piece))
	next, prev, rank := grow(sc.next, int(n)+1), grow(sc.prev, int(n)+1), growU(sc.pairs, int(n)+1)
	h := sc.heap[:0]
	for i := range n + 1 {
		next[i], prev[i], rank[i] = i+1, i-1, noRank
		if i+2 <= n {
			if r := v.rank(piece[i : i+2]); r != noRank {
				rank[i] = r
				h = append(h, uint64(r)<<32|uint64(i))
			}
		}
	}
	for k := len(h)/2 - 1; k >= 0; k-- {
		down(h, k)
	}
	// pairRank is the rank of part i merged with the part after it.
	pairRank := func(i int32) uint32 {
		j := next[i]
		if j >= n {
			return noRank
		}
		return v.rank(piece[i:next[j]])
	}
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		down(h, 0)
		r, i := uint32(top>>32), int32(uint32(top))
		if rank[i] != r {
			continue
		}
		j := next[i]
		rank[j] = noRank // part j is gone
		next[i] = next[j]
		if next[j] < n {
			prev[next[j]] = i
		}
		for _, a := range [2]int32{i, prev[i]} {
			if a < 0 {
				continue
			}
			if rank[a] = pairRank(a); rank[a] != noRank {
				h = append(h, uint64(rank[a])<<32|uint64(a))
				up(h, len(h)-1)
			}
		}
	}
	b := sc.bounds[:0]
	for i := int32(0); i < n; i = next[i] {
		b = append(b, i)
	}
	b = append(b, n)
	sc.bounds, sc.next, sc.prev, sc.pairs, sc.heap = b, next, prev, rank, h
	return b
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growU(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

func down(h []uint64, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func up(h []uint64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}
