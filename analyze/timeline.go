package analyze

// point is a TimelinePoint as a Tally keeps it: its group as the group's
// number (groupTally.id) rather than its name, so that the millions of
// points of a long run hold no pointer for the garbage collector to follow
// on every cycle (a string per point made --timeline twice as slow on ten
// million rows).
type point struct {
	group          int32
	sentMS, waitMS float64
}

// timeline holds a Tally's points in the order they were counted: the
// points of merged blocks, kept as the blocks counted them, then the
// points added since.
type timeline struct {
	earlier [][]point
	points  []point
}

func (tl *timeline) add(p point) { tl.points = append(tl.points, p) }

func (tl *timeline) len() int {
	n := len(tl.points)
	for _, ps := range tl.earlier {
		n += len(ps)
	}
	return n
}

// absorb appends o's points, whose groups are renumbered by remap (o's
// group number to tl's); o is not used afterwards.
func (tl *timeline) absorb(o *timeline, remap []int32) {
	if len(tl.points) > 0 {
		tl.earlier = append(tl.earlier, tl.points)
		tl.points = nil
	}
	for _, ps := range append(o.earlier, o.points) {
		for i := range ps {
			ps[i].group = remap[ps[i].group]
		}
		if len(ps) > 0 {
			tl.earlier = append(tl.earlier, ps)
		}
	}
}

// published returns the points in order as TimelinePoints, each group
// under its label: labels[g] for group number g.
func (tl *timeline) published(labels []string) []TimelinePoint {
	out := make([]TimelinePoint, 0, tl.len())
	for _, ps := range append(tl.earlier, tl.points) {
		for _, p := range ps {
			out = append(out, TimelinePoint{Group: labels[p.group], SentMS: p.sentMS, WaitMS: p.waitMS})
		}
	}
	return out
}
