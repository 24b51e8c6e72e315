// Package tomlfile decodes kvshare store files strictly: every value is
// taken as its TOML type or refused with the file, section and key named
// (a float where an integer belongs, a table where a value belongs), an
// unknown section or key is refused (naming the ones known, and the one
// it is likely misspelt for: [Nearest]), a key of
// another case is not taken for a known one, and every refusal of a file
// is reported, not only the first. The sections every store file may
// hold are decoded here: [blob] ([File.Blob]), [memory], the embedded
// store's ([File.Memory]), and [node], how `kvshare node` serves the
// store ([File.Node]); [File.Finish] checks [memory] and [node] when the
// reader did not take them, so every reader refuses a bad one; each store's driver
// decodes its own section with [File.Section] and the [Section]
// methods. github.com/BurntSushi/toml parses the TOML: writing a TOML
// parser by hand is not this project's job.
package tomlfile
