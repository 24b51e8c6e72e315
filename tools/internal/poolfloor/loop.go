package poolfloor

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// Loop makes the SDK calls a driver must make, and nothing else: a
// fixed number of bare goroutines take prepared parts from two queues,
// gets before puts, and make one call per get part and two per put part
// (the put and the exists-check that confirms its 0s).
type Loop struct {
	client     mooncakesdk.Client
	gets, puts chan *Part
	quit       chan struct{}
	wg         sync.WaitGroup
}

// Start starts workers goroutines making calls on client.
func Start(client mooncakesdk.Client, workers int) *Loop {
	l := &Loop{
		client: client,
		gets:   make(chan *Part, 1<<12),
		puts:   make(chan *Part, 1<<12),
		quit:   make(chan struct{}),
	}
	l.wg.Add(workers)
	for range workers {
		go l.work()
	}
	return l
}

// Stop ends the workers once they finish the part in hand.
func (l *Loop) Stop() {
	close(l.quit)
	l.wg.Wait()
}

func (l *Loop) work() {
	defer l.wg.Done()
	for {
		select {
		case p := <-l.gets:
			RunPart(l.client, p)
			continue
		default:
		}
		select {
		case p := <-l.gets:
			RunPart(l.client, p)
		case p := <-l.puts:
			RunPart(l.client, p)
		case <-l.quit:
			return
		}
	}
}

// Submit queues every part of s; s.Done closes when the last is done.
func (l *Loop) Submit(s *Submission) {
	s.Reset()
	q := l.puts
	if s.Dir() == contract.GetDir {
		q = l.gets
	}
	for _, p := range s.parts {
		q <- p
	}
}
