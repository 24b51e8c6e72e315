// Package doccheck holds the tests that fail when the documentation
// disagrees with the code; `go run mage.go ci` runs them. They read every
// Markdown file of the repository and every Go file's comments, leaving
// out folders starting with a dot, testdata, vendor, node_modules,
// __pycache__, venv and the Python client's build output.
//
// TestTOMLBlocksLoad: every ```toml block is a store file, loaded by the
// loader of the store its sections name: [mooncake] by
// mooncakesdk.ParseStoreConfig, [redis] by redisdrv.ParseStoreConfig,
// [disk] by diskdrv.LoadStoreFile; [memory], or no store section at all
// ([blob], [scope], [node] alone), by package storeconfig/tomlfile, which
// checks the sections every reader knows. A block of two stores fails. A
// block that shows part of a file on purpose follows the line
//
//	<!-- toml: fragment -->
//
// and is read as strictly, except that a key the store requires may be
// left out.
//
// TestDefaultTablesStateTheCode: every table with a column headed
// "Default…" or "Zero value" is tied to the code it documents by its file
// and the header of the column naming its fields (defaultTables). That
// column names a row's fields: each code span up to a space or "=" ("—":
// none).
// The default cell states a value for each: its text up to the first
// "; ", ": " or " (", split at ", " into one value per field, or one for
// all. A number, size ("64 MiB"), duration ("90 s"), string or boolean
// must be what the code gives the field left zero (the file of the
// required keys alone, decoded; the defaults the module exports; a
// driver built from the zero options), or the constant's name;
// "required" must be refused when left out; a zero the code keeps may be
// described in words. Every field must have a row.
//
// TestLinksResolve: every relative link [text](path#anchor) names a file
// or folder of the repository, and the anchor a heading of that file
// (GitHub's anchors: lower case, punctuation dropped, spaces made
// hyphens, "-1" on a repeat).
//
// TestSectionReferencesResolve: every reference to headings, in
// Markdown prose and Go comments (not in code blocks), names headings its
// file holds. FILE is a path ending in .md (taken from the referring
// file's folder when it is there, else from the root), a link to one, or
// the bare word README; the forms read are
//
//	FILE, section "Heading"        FILE (section "Heading")
//	FILE, "Heading"                FILE ("Heading")
//	FILE's "Heading"               FILE (sections "A" and "B")
//	section "Heading"              the file named last before it, else the file itself
//
// A heading is named whole, or up to its first ": ", ", ", " (" or " — "
// ("When calls meet" for "When calls meet: who owns what"). Go code
// blocks are comment lines indented by a tab.
//
// The package itself holds only the scanners (Markdown, Go comments,
// default cells, constant defaults in Go source), which import only the
// standard library; the tests import the modules they check.
package doccheck
