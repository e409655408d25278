package tiers

// startBuild builds the search index from the view's live entries in a
// background goroutine, unless one is already at work or the Vector is
// closed. The goroutine reads only what the entries were created with,
// never changed afterwards; when done it takes v.mu, brings the index up
// to date with the view as it is by then (reconcile) and installs it.
// Close stops it and waits for it. The caller holds v.mu.
func (v *Vector) startBuild() {
	if v.building != nil || v.closed.Load() {
		return
	}
	done := make(chan struct{})
	v.building = done
	go v.build(v.view.live(), done)
}

// buildCheckEvery is how many entries the builder indexes between checks
// that the Vector is still open.
const buildCheckEvery = 256

// build indexes live, then installs the index; see startBuild.
func (v *Vector) build(live []*viewEntry, done chan struct{}) {
	defer close(done)
	x := newTextIndex()
	for i, e := range live {
		if i%buildCheckEvery == 0 && v.closed.Load() {
			v.endBuild(nil)
			return
		}
		x.add(e)
	}
	v.endBuild(x)
}

// endBuild installs x, unless it is nil, the Vector was closed, or an
// index is already in place, and notes that no build is at work.
func (v *Vector) endBuild(x *textIndex) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.building = nil
	if x == nil || v.closed.Load() || v.search.built() {
		return
	}
	reconcile(x, &v.view)
	v.search.index = x
}

// waitBuild waits until no build is at work.
func (v *Vector) waitBuild() {
	v.mu.Lock()
	done := v.building
	v.mu.Unlock()
	if done != nil {
		<-done
	}
}
