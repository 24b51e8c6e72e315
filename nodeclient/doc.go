// Package nodeclient is the Go client of the kvshare node: an engine
// attaches, lends a sealed memfd, and publishes, fetches and looks up
// rows through the node. It imports no store driver.
package nodeclient
