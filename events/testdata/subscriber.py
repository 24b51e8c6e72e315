"""A KV-event subscriber written against vLLM's documented layout.

It reads the node's stream as a router would: a SUB socket on one topic
(a scope's digest), the sequence frame checked for gaps, and a DEALER
socket asking the replay socket for what it missed.  Batches are decoded
positionally with Debian's python3-msgpack (vLLM's own example uses
msgspec, which Debian does not ship).

Each batch taken is printed as one JSON line; so is each gap.  It runs
until it is killed, or its standard input ends.

  --drop-one   once a batch was taken live (the subscription reached the
               publisher), drop the next live batch it would take (a lost
               message: the gap it leaves must be replayed)
"""

import argparse
import json
import sys

import msgpack
import zmq

END_OF_REPLAY = -1


def decode_event(ev):
    """One event of vLLM's array layout, by position."""
    tag = ev[0]
    if tag == "BlockStored":
        out = {
            "type": tag,
            "block_hashes": [h.hex() if isinstance(h, bytes) else h for h in ev[1]],
            "parent_block_hash": ev[2],
            "token_ids": ev[3],
            "block_size": ev[4],
            "lora_id": ev[5],
        }
        out["medium"] = ev[6] if len(ev) > 6 else None
        out["lora_name"] = ev[7] if len(ev) > 7 else None
        return out
    if tag == "BlockRemoved":
        return {
            "type": tag,
            "block_hashes": [h.hex() if isinstance(h, bytes) else h for h in ev[1]],
            "medium": ev[2] if len(ev) > 2 else None,
        }
    if tag == "AllBlocksCleared":
        return {"type": tag}
    raise ValueError("unknown event tag %r" % (tag,))


def decode_batch(payload):
    batch = msgpack.unpackb(payload, raw=False)
    ts, events = batch[0], batch[1]
    rank = batch[2] if len(batch) > 2 else None
    return {"ts": ts, "rank": rank, "events": [decode_event(e) for e in events]}


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pub", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--drop-one", action="store_true")
    ap.add_argument("--wait-ms", type=int, required=True)
    args = ap.parse_args()

    topic = args.topic.encode()
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.connect(args.pub)
    sub.setsockopt(zmq.SUBSCRIBE, topic)
    replay = ctx.socket(zmq.DEALER)
    replay.setsockopt(zmq.LINGER, 0)
    replay.connect(args.replay)
    emit({"ready": True})

    state = {"next": 0, "armed": False, "drop": args.drop_one}

    def take(seq, payload, how):
        if seq != state["next"]:
            return False
        b = decode_batch(payload)
        b["seq"] = seq
        b["how"] = how
        emit(b)
        state["next"] += 1
        return True

    def ask_replay():
        start = state["next"]
        replay.send_multipart([b"", start.to_bytes(8, "big"), topic])
        while True:
            if not replay.poll(args.wait_ms):
                emit({"replay_unanswered": start})
                return
            frames = replay.recv_multipart()
            if len(frames) != 3 or frames[0] != b"":
                raise ValueError("a replay reply of %d frames" % len(frames))
            seq = int.from_bytes(frames[1], "big", signed=True)
            if seq == END_OF_REPLAY:
                if frames[2] != b"":
                    raise ValueError("end of replay with a payload")
                return
            take(seq, frames[2], "replay")

    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    poller.register(sys.stdin, zmq.POLLIN)
    while True:
        # An idle poll asks the replay socket for anything missed (a
        # subscription that reached the publisher after a batch went out).
        ready = dict(poller.poll(200))
        if sys.stdin.fileno() in ready or sys.stdin in ready:
            if sys.stdin.read() == "":
                break
        if sub not in ready:
            ask_replay()
            continue
        got_topic, seq_bytes, payload = sub.recv_multipart()
        if got_topic != topic:
            raise ValueError("a batch of topic %r on a subscription to %r" % (got_topic, topic))
        seq = int.from_bytes(seq_bytes, "big")
        if state["armed"] and state["drop"] and seq == state["next"]:
            state["drop"] = False
            emit({"dropped": seq})
            continue
        if seq > state["next"]:
            emit({"gap": [state["next"], seq]})
            ask_replay()
        if take(seq, payload, "live"):
            state["armed"] = True
    sub.close()
    replay.close()
    ctx.term()


if __name__ == "__main__":
    main()
