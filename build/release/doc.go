// Package release makes kvshare's releases and the module proxy that
// stands in for one.
//
// [Plan] and [Apply] are `go run mage.go release VERSION`: every
// sibling requirement set to VERSION in every go.mod (modules and
// outside consumers), `go mod tidy` in each module, one commit, and a
// tag per module (`binding/v0.3.0`, the root module `v0.3.0`), all in
// the local repository. Pushing the tags is the releaser's step.
//
// [Dist] is `go run mage.go dist DIR [VERSION]`: a directory in the
// GOPROXY file layout (`<module path>/@v/list`, `.info`, `.mod`,
// `.zip`) holding every module as the release of VERSION would publish
// it, made from the committed tree with golang.org/x/mod/zip, so the go
// command accepts it as it would a registry:
//
//	GOPROXY=file://$DIR,$(go env GOPROXY) GONOSUMDB='github.com/kvshare/*' go get github.com/kvshare/kvshare/binding@v0.3.0
//
// golang.org/x/mod is the go command's own code for go.mod files, semver
// and module zips; writing those by hand would mean matching the go
// command's rules byte for byte.
package release
