// Package engineguide is the code of the integrator's guide,
// docs/engine-guide.md, kept as tests so that every line of it is built
// and run by `go run mage.go ci`.
//
// Every ```go block of the guide is a region of these files: the lines
// between a `// guide:NAME` comment and the next `// guide:end`, with
// their common indentation removed. In the guide, each block follows a
// `<!-- code: NAME -->` line. TestGuideMatchesCode checks both ways (each
// block is its region, each region is in the guide); after editing the
// code, `go test -run TestGuideMatchesCode -update` writes the regions
// into the guide. The examples run the code and check what it prints.
//
// The package itself holds no code: its tests import what the guide
// uses (lender, binding, memdrv, mooncakedrv, redisdrv, telemetry, the
// OpenTelemetry SDK). Its folder roundtrip is the guide's whole program,
// a command of at most 80 lines of code (a test counts them), whose
// tests fail each step in turn and check that everything opened, lent
// and mapped is given back.
package engineguide
