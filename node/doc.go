// Package node is the kvshare node: a daemon that engines in other
// processes attach to over a Unix socket, lend staging memory to (a
// sealed memfd each), and move rows through, over one store driver that
// every engine shares.
package node
