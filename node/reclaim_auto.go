package node

import "context"

// autoReclaimAfterKeep starts the automatic reclaim when the bytes of
// the lends the node keeps reach Config.ReclaimAbove (0: never). One
// runs at a time; a lend kept while one runs has it look again once it
// ends, so no kept lend is left unseen by the policy.
func (n *Node) autoReclaimAfterKeep() {
	above := n.cfg.ReclaimAbove
	if above <= 0 || n.tally.snapshot().HeldBytes < above {
		return
	}
	n.mu.Lock()
	if n.autoRunning != nil {
		n.autoMissed = true
		n.mu.Unlock()
		return
	}
	done := make(chan struct{})
	n.autoRunning = done
	n.mu.Unlock()
	go n.autoReclaim(done)
}

// autoReclaiming is closed when the automatic reclaim running now ends;
// nil when none runs.
func (n *Node) autoReclaiming() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.autoRunning == nil {
		return nil
	}
	return n.autoRunning
}

// autoReclaim runs the automatic reclaim, each try bounded by
// Config.ReclaimWait, and again while a lend was kept during the last
// one and the bytes kept still reach Config.ReclaimAbove.
func (n *Node) autoReclaim(done chan struct{}) {
	defer close(done)
	for {
		held := n.tally.snapshot().HeldBytes
		n.log.Warn("kvshare/node: the lends kept reached ReclaimAbove; reclaiming for every engine", "held_bytes", held, "above", n.cfg.ReclaimAbove)
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ReclaimWait)
		got, err := n.Reclaim(ctx)
		cancel()
		if err != nil {
			n.log.Warn("kvshare/node: automatic reclaim", "bytes", got, "err", err)
		}
		n.mu.Lock()
		again := n.autoMissed && n.tally.snapshot().HeldBytes >= n.cfg.ReclaimAbove
		n.autoMissed = false
		if !again {
			n.autoRunning = nil
		}
		n.mu.Unlock()
		if !again {
			return
		}
	}
}
