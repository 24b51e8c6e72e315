package storefile

import (
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// Node reads the [node] section of the store file at path (the zero
// Node when the file has none), refusing a bad one with every refusal
// naming the file and the key. It checks nothing else: the store's
// parser, which every command runs, checks the whole file ([node]
// included).
func Node(path string) (storeconfig.Node, error) {
	f := tomlfile.Read(path, sections)
	n := f.Node()
	return n, f.SectionErr(storeconfig.NodeSection)
}
