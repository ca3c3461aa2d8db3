package intelpt

// segments is the scheduler ComputeStatsFile and DumpFile share: workers
// goroutines run worker, which takes the indexes 0..n-1 of a trace's
// segments from jobs, in order; at most workers+1 segments are taken
// before the caller has merged them (merged, called once per segment as
// it takes each result, in order), so that the results waiting stay few.
// stop ends it: no more segments are handed out and done is closed (a
// worker gives up the segment in hand); the caller defers it.
type segments struct {
	tokens chan struct{} // segments taken and not merged yet
	done   chan struct{}
}

func startSegments(n, workers int, worker func(jobs <-chan int, done <-chan struct{})) *segments {
	s := &segments{tokens: make(chan struct{}, workers+1), done: make(chan struct{})}
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range n {
			select {
			case s.tokens <- struct{}{}:
			case <-s.done:
				return
			}
			select {
			case jobs <- i:
			case <-s.done:
				return
			}
		}
	}()
	for range workers {
		go worker(jobs, s.done)
	}
	return s
}

// merged says the caller has taken the result of the next segment.
func (s *segments) merged() { <-s.tokens }

// stop ends the scheduler.
func (s *segments) stop() { close(s.done) }
