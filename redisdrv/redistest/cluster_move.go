package redistest

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Migration defaults.
const (
	// DefaultMigrateBatch is how many keys MigrateKeys moves per MIGRATE
	// when its batch is 0.
	DefaultMigrateBatch = 100
	// migrateTimeout is MIGRATE's own timeout for its connection to the
	// target.
	migrateTimeout = 5 * time.Second
)

// A Move is one slot on its way from one node to another, by Redis
// Cluster's migration protocol (the steps redis-cli --cluster reshard
// takes): BeginMove, MigrateKeys, Finish. Clients may keep using the
// cluster throughout; a client that follows ASK and MOVED redirects
// loses no key.
type Move struct {
	c              *Cluster
	slot, from, to int
}

// BeginMove starts moving slot to node to from the node that owns it
// now: CLUSTER SETSLOT slot IMPORTING <source ID> on the target, then
// CLUSTER SETSLOT slot MIGRATING <target ID> on the source. From then on
// the source serves the slot's keys it still holds and answers "-ASK slot
// <target's Addr>" for the others (a write of a new key too), and the
// target serves the slot's keys to a client that sends ASKING first.
// ErrCluster when to owns the slot already.
func (c *Cluster) BeginMove(ctx context.Context, slot, to int) (*Move, error) {
	_ = c.nodes[to]
	from, err := c.Owner(ctx, slot)
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("%w: slot %d is on node %d already", ErrCluster, slot, to)
	}
	s := strconv.Itoa(slot)
	if err := c.do(ctx, to, "CLUSTER", "SETSLOT", s, "IMPORTING", c.ids[from]).Error(); err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER SETSLOT %d IMPORTING on node %d: %w", slot, to, err)
	}
	if err := c.do(ctx, from, "CLUSTER", "SETSLOT", s, "MIGRATING", c.ids[to]).Error(); err != nil {
		err = fmt.Errorf("redistest: CLUSTER SETSLOT %d MIGRATING on node %d: %w", slot, from, err)
		if undo := c.do(ctx, to, "CLUSTER", "SETSLOT", s, "STABLE").Error(); undo != nil {
			err = fmt.Errorf("%w; undoing IMPORTING on node %d: %w", err, to, undo)
		}
		return nil, err
	}
	c.log.Debug("redistest: slot move begun", "slot", slot, "from", from, "to", to)
	return &Move{c: c, slot: slot, from: from, to: to}, nil
}

// Slot is the slot being moved.
func (m *Move) Slot() int { return m.slot }

// From is the index of the node the slot moves from.
func (m *Move) From() int { return m.from }

// To is the index of the node the slot moves to.
func (m *Move) To() int { return m.to }

// MigrateKeys moves the slot's keys from the source to the target until
// the source holds none: CLUSTER GETKEYSINSLOT slot batch on the source,
// then MIGRATE to the target's own address (not its proxy's), all those
// keys at once, with "KEYS", again and again. moved counts the keys
// MIGRATE moved (a key gone meanwhile is not counted when MIGRATE
// answers NOKEY). A batch of 0 is DefaultMigrateBatch.
func (m *Move) MigrateKeys(ctx context.Context, batch int) (moved int, err error) {
	switch {
	case batch < 0:
		return 0, fmt.Errorf("%w: MigrateKeys batch %d is negative", ErrOptions, batch)
	case batch == 0:
		batch = DefaultMigrateBatch
	}
	c := m.c
	target := c.nodes[m.to]
	for {
		keys, err := c.do(ctx, m.from, "CLUSTER", "GETKEYSINSLOT", strconv.Itoa(m.slot), strconv.Itoa(batch)).AsStrSlice()
		if err != nil {
			return moved, fmt.Errorf("redistest: CLUSTER GETKEYSINSLOT %d on node %d: %w", m.slot, m.from, err)
		}
		if len(keys) == 0 {
			c.log.Debug("redistest: slot keys migrated", "slot", m.slot, "from", m.from, "to", m.to, "keys", moved)
			return moved, nil
		}
		args := append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(target.Port()), "", "0",
			strconv.FormatInt(migrateTimeout.Milliseconds(), 10), "KEYS"}, keys...)
		reply, err := c.do(ctx, m.from, args...).ToString()
		if err != nil {
			return moved, fmt.Errorf("redistest: MIGRATE of %d keys of slot %d from node %d to node %d: %w", len(keys), m.slot, m.from, m.to, err)
		}
		if reply == "OK" {
			moved += len(keys)
		}
	}
}

// Finish hands the slot to the target: CLUSTER SETSLOT slot NODE <target
// ID> on the target (which takes a new config epoch, so its claim wins
// across the cluster), then on the source, then on every other live
// node; it returns once every live node names the target as the owner.
// The source refuses while it still holds keys of the slot (run
// MigrateKeys first). From then on the source answers "-MOVED slot
// <target's Addr>" for the slot's keys.
func (m *Move) Finish(ctx context.Context) error {
	c := m.c
	s := strconv.Itoa(m.slot)
	order := []int{m.to, m.from}
	for k := range c.nodes {
		if k != m.to && k != m.from {
			order = append(order, k)
		}
	}
	for n, k := range order {
		if n >= 2 && !c.live(k) {
			c.log.Warn("redistest: slot move not told to a node that is down; gossip will", "slot", m.slot, "node", k)
			continue
		}
		if err := c.do(ctx, k, "CLUSTER", "SETSLOT", s, "NODE", c.ids[m.to]).Error(); err != nil {
			return fmt.Errorf("redistest: CLUSTER SETSLOT %d NODE %s (node %d) on node %d: %w", m.slot, c.ids[m.to], m.to, k, err)
		}
	}
	what := fmt.Sprintf("every live node naming node %d the owner of slot %d", m.to, m.slot)
	err := c.await(ctx, c.opts.StartTimeout, what, func(ctx context.Context) error {
		for k := range c.nodes {
			if !c.live(k) {
				continue
			}
			lines, err := c.view(ctx, k)
			if err != nil {
				return err
			}
			owners, err := c.owners(lines)
			if err != nil {
				return err
			}
			if owners[m.slot] != m.to {
				return fmt.Errorf("node %d sees slot %d on node %d", k, m.slot, owners[m.slot])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.log.Debug("redistest: slot move finished", "slot", m.slot, "from", m.from, "to", m.to)
	return nil
}

// MoveSlot moves slot to node to: BeginMove, MigrateKeys (batches of
// DefaultMigrateBatch), Finish. moved is the number of keys migrated.
func (c *Cluster) MoveSlot(ctx context.Context, slot, to int) (moved int, err error) {
	m, err := c.BeginMove(ctx, slot, to)
	if err != nil {
		return 0, err
	}
	if moved, err = m.MigrateKeys(ctx, 0); err != nil {
		return moved, err
	}
	return moved, m.Finish(ctx)
}
