// Package nodewire is the kvshare node's wire protocol: the frames an
// engine and the node exchange over a Unix stream socket, their codec,
// and the table of error codes. PROTOCOL.md, beside this file, is the
// protocol byte for byte.
package nodewire
