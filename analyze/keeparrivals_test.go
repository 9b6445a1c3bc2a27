package analyze

// keepArrivals sets how many rows of inputs that can be read again a
// Tally keeps before it counts their windows by a second pass instead
// (MaxKeptArrivals); after OfferedLoad. For tests.
func keepArrivals(n int) TallyOption {
	return func(t *Tally) {
		if t.load != nil {
			t.load.maxKept = n
		}
	}
}
