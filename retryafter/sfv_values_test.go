package retryafter

// What the structured-field tests read that the field readers do not:
// the whole value as one Item, a Decimal's and a Boolean's values.

// decimal is the value of a Decimal.
func (b sfBare) decimal() float64 { return float64(b.i) / 1000 }

// boolean is the value of a Boolean.
func (b sfBare) boolean() bool { return b.i == 1 }

// item parses the whole value as an Item (§4.2, §4.2.3).
func (p *sfParser) item() (sfItem, bool) {
	p.skipSP()
	it, ok := p.itemAt()
	p.skipSP()
	return it, ok && p.eof()
}
