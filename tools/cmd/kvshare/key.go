package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// scopeFlagUsage says what each scope field is, for its flag.
var scopeFlagUsage = map[string]string{
	"model":            "the model (required)",
	"revision":         "the weights revision (required)",
	"adapter":          "the LoRA adapter (empty: the base model)",
	"kv_dtype":         "the element type of the cached K and V, e.g. fp16, fp8_e4m3 (required)",
	"quantization":     "how the KV is quantized beyond its dtype (empty: none)",
	"tokens_per_block": "tokens a block holds (required)",
	"kv_heads":         "KV heads a block holds (required)",
	"head_dim":         "dimension of one head (required)",
	"first_layer":      "first layer a block holds",
	"layers":           "layers a block holds from there (required)",
	"tp_rank":          "tensor-parallel rank",
	"tp_size":          "tensor-parallel world size (required)",
	"pp_rank":          "pipeline-parallel rank",
	"pp_size":          "pipeline-parallel world size (required)",
	"hash_algorithm":   "the algorithm of the engine's block hashes, the names (required)",
	"hash_seed":        "the seed of those hashes (empty: unseeded)",
	"tenant":           "the tenant (empty: none)",
}

// scopeFlag is the flag of a scope field: "tp_rank" is --tp-rank.
func scopeFlag(field string) string { return strings.ReplaceAll(field, "_", "-") }

// keyCmd prints the store key of each name under a scope: the scope's
// fields from flags, from a store file's [scope], or both (a flag given
// overrides the file's field); the prefix from --prefix, the file's
// [blob] key_prefix, or the default. --unscoped prints today's unscoped
// keys instead. The exit status is 0, or 2 for bad usage or input.
func keyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvshare key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kvshare key [--store store.toml] [scope flags] [--prefix P] [--hex] NAME...\n\n"+
			"Prints the store key of each NAME (text, or hex with --hex) under a scope, one a line;\n"+
			"the algorithm is in docs/design/keys.md, section \"Scopes\".\n\nflags:")
		fs.PrintDefaults()
	}
	store := fs.String("store", "", "store file: its [scope] section and its [blob] key_prefix (a flag given overrides the file's)")
	prefix := fs.String("prefix", "", "key prefix (default: the store file's key_prefix, else "+storeconfig.DefaultKeyPrefix+")")
	isHex := fs.Bool("hex", false, "the names are written in hex")
	unscoped := fs.Bool("unscoped", false, "print unscoped keys (prefix/v1/hex(name)), for a deployment without a scope")
	verbose := fs.Bool("v", false, "print the scope's canonical encoding and digest first")
	fields := map[string]*string{}
	for _, name := range keys.ScopeFieldNames() {
		fields[name] = fs.String(scopeFlag(name), "", scopeFlagUsage[name])
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kvshare key: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() == 0 {
		return fail("no name given")
	}
	blob := storeconfig.Blob{}
	if *store != "" {
		b, err := readBlob(*store)
		if err != nil {
			return fail("%v", err)
		}
		blob = b
	}
	given := map[string]string{}
	if !blob.Scope.IsZero() {
		given = blob.Scope.Fields()
	}
	fs.Visit(func(f *flag.Flag) {
		for name, v := range fields {
			if scopeFlag(name) == f.Name {
				given[name] = *v
			}
		}
	})
	var scope keys.Scope
	switch {
	case *unscoped && len(given) > 0:
		return fail("--unscoped, but a scope is given (flags or the store file's [scope])")
	case !*unscoped && len(given) == 0:
		return fail("no scope: give its fields (--model, --kv-dtype, …; -h lists them), a store file with a [scope] section, or --unscoped")
	case !*unscoped:
		s, err := keys.ScopeFromFields(given)
		if err != nil {
			return fail("%s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
		}
		scope = s
	}
	stem, err := keys.NewStem(firstOf(*prefix, blob.KeyPrefix, storeconfig.DefaultKeyPrefix))
	if err == nil && !*unscoped {
		stem, err = keys.NewScopedStem(stem.Prefix(), scope)
	}
	if err != nil {
		return fail("%v", err)
	}
	var out strings.Builder
	if *verbose && !*unscoped {
		text, _ := scope.MarshalText() // valid: ScopeFromFields checked it
		digest, _ := scope.Digest()
		fmt.Fprintf(&out, "scope %s\ndigest %s\n", text, digest)
	}
	for i, arg := range fs.Args() {
		name := []byte(arg)
		if *isHex {
			if name, err = hex.DecodeString(arg); err != nil {
				return fail("name %d (%q) is not hex: %v", i, arg, err)
			}
		}
		key, err := stem.Key(name)
		if err != nil {
			return fail("name %d (%q): %v", i, arg, err)
		}
		out.WriteString(key + "\n")
	}
	_, _ = io.WriteString(stdout, out.String())
	return 0
}

// readBlob reads the [blob] and [scope] sections of the store file at
// path, whatever store it names; a refusal names the file, the section
// and the key.
func readBlob(path string) (storeconfig.Blob, error) {
	f := tomlfile.Read(path, map[string][]string{storefile.MooncakeSection: nil, storefile.RedisSection: nil})
	b := f.Blob()
	if !f.Parsed() {
		return b, f.SectionErr(storeconfig.BlobSection)
	}
	return b, errors.Join(f.SectionErr(storeconfig.BlobSection), f.SectionErr(storeconfig.ScopeSection))
}

// firstOf is the first of ss that is not empty.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
