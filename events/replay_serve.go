package events

import (
	"github.com/go-zeromq/zmq4"
)

// serveReplays answers replay requests until Close: each with the kept
// batches of its topic from its start sequence on, then the end marker
// (sequence -1, an empty payload).
func (p *Publisher) serveReplays() {
	defer p.done.Done()
	for {
		msg, err := p.router.Recv()
		if err != nil {
			if p.closed.Load() {
				return
			}
			p.log.Debug("kvshare/events: the replay socket", "err", err)
			continue
		}
		r, err := parseReplay(msg.Frames)
		if err != nil {
			p.tally.badReplays.Add(1)
			p.log.Warn("kvshare/events: a replay request refused", "err", err)
		}
		var batches []sent
		if err == nil {
			var ok bool
			if batches, ok = p.buf.since(r); !ok {
				p.tally.badReplays.Add(1)
				p.log.Warn("kvshare/events: a replay request named no topic, and this node publishes several: send the topic as a second frame")
			}
			p.tally.replays.Add(1)
		}
		if r.peer == nil {
			continue
		}
		for _, s := range batches {
			if p.reply(r, seqFrame(s.seq), s.payload) != nil {
				break
			}
			p.tally.replayed.Add(1)
		}
		_ = p.reply(r, endOfReplay, nil)
	}
}

// reply sends one reply frame pair to the asker.
func (p *Publisher) reply(r replayRequest, seq, payload []byte) error {
	frames := [][]byte{r.peer}
	if r.delimited {
		frames = append(frames, nil)
	}
	frames = append(frames, seq, payload)
	return p.router.SendMulti(zmq4.NewMsgFrom(frames...))
}
