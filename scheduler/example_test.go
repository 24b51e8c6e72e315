package scheduler_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/scheduler"
)

// One worker, held by a first part while the rest queue: gets go first,
// a put goes next once four gets have passed it, and a cancelled part
// never runs.
func Example() {
	started, release := make(chan struct{}), make(chan struct{})
	var ran sync.WaitGroup
	pool, err := scheduler.New(1, func(name string) {
		defer ran.Done()
		if name == "first" {
			close(started)
			<-release
			return
		}
		fmt.Println(name)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	submit := func(kind scheduler.Kind, name string) {
		ran.Add(1)
		if err := pool.Submit(kind, name); err != nil {
			fmt.Println(err)
		}
	}

	submit(scheduler.Get, "first")
	<-started // the only worker is busy: what follows waits in the queue
	submit(scheduler.Put, "put 1")
	for i := 1; i <= 6; i++ {
		submit(scheduler.Get, fmt.Sprintf("get %d", i))
	}
	submit(scheduler.Put, "put 2")
	gone := pool.Cancel(func(name string) bool { return name == "get 6" })
	ran.Add(-len(gone))
	fmt.Println("cancelled:", gone)

	close(release)
	ran.Wait()
	fmt.Println("stopped:", pool.Stop(context.Background()))
	// Output:
	// cancelled: [get 6]
	// get 1
	// get 2
	// get 3
	// get 4
	// put 1
	// get 5
	// put 2
	// stopped: true
}

// A driver's drain: cancel every part no worker took (their rows end
// Cancelled), then stop the pool and wait for the running parts.
func ExamplePool_Stop() {
	started, release := make(chan struct{}), make(chan struct{})
	pool, err := scheduler.New(1, func(row string) {
		if row == "row 0" {
			close(started)
			<-release
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 3 {
		if err := pool.Submit(scheduler.Put, fmt.Sprintf("row %d", i)); err != nil {
			fmt.Println(err)
		}
	}
	<-started

	fmt.Println("cancelled:", pool.Cancel(func(string) bool { return true }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println("stopped with an ended context:", pool.Stop(ctx))
	fmt.Println("submit:", pool.Submit(scheduler.Get, "row 3"))
	close(release)
	fmt.Println("stopped:", pool.Stop(context.Background()))
	// Output:
	// cancelled: [row 1 row 2]
	// stopped with an ended context: false
	// submit: scheduler: pool stopped: get part refused
	// stopped: true
}
