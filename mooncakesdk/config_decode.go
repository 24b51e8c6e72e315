package mooncakesdk

import (
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// The file's shape. Every value is kept as a toml.Primitive and decoded
// by hand, so a wrong type is refused with its section and key named, and
// a key no field takes stays in MetaData.Undecoded.
type fileShape struct {
	Blob     toml.Primitive `toml:"blob"`
	Mooncake toml.Primitive `toml:"mooncake"`
}

type blobShape struct {
	KeyPrefix    toml.Primitive `toml:"key_prefix"`
	RowsPerCall  toml.Primitive `toml:"rows_per_call"`
	BytesPerCall toml.Primitive `toml:"bytes_per_call"`
}

type mooncakeShape struct {
	Library           toml.Primitive `toml:"library"`
	SDKSHA256         toml.Primitive `toml:"sdk_sha256"`
	Master            toml.Primitive `toml:"master"`
	MetadataServer    toml.Primitive `toml:"metadata_server"`
	Protocol          toml.Primitive `toml:"protocol"`
	Devices           toml.Primitive `toml:"devices"`
	LocalHostname     toml.Primitive `toml:"local_hostname"`
	GlobalSegmentSize toml.Primitive `toml:"global_segment_size"`
	LocalBufferSize   toml.Primitive `toml:"local_buffer_size"`
	Workers           toml.Primitive `toml:"workers"`
	RowsPerCall       toml.Primitive `toml:"rows_per_call"`
	BytesPerCall      toml.Primitive `toml:"bytes_per_call"`
}

// knownKeys lists every section and its keys, exactly as spelled.
var knownKeys = map[string][]string{
	"blob": {"key_prefix", "rows_per_call", "bytes_per_call"},
	"mooncake": {"library", "sdk_sha256", "master", "metadata_server", "protocol", "devices",
		"local_hostname", "global_segment_size", "local_buffer_size", "workers", "rows_per_call", "bytes_per_call"},
}

// configDecoder decodes one file and collects its refusals.
type configDecoder struct {
	file     string
	md       toml.MetaData
	findings []*ConfigError
	refused  map[string]bool // "section" or "section.key" already refused
}

func (d *configDecoder) refuse(section, key, format string, args ...any) {
	d.findings = append(d.findings, &ConfigError{File: d.file, Section: section, Key: key, Reason: fmt.Sprintf(format, args...)})
	d.refused[section] = d.refused[section] || key == ""
	if key != "" {
		d.refused[section+"."+key] = true
	}
}

// decodeStoreConfig reads data into a StoreConfig with defaults for the
// keys left out (and for keys refused). Values are range-checked
// afterwards by check. refused holds "section.key" for every key already
// refused; it is nil when the file did not parse at all.
func decodeStoreConfig(file string, data []byte) (cfg StoreConfig, findings []*ConfigError, refused map[string]bool) {
	cfg = StoreConfig{File: file}
	cfg.Mooncake.Protocol = DefaultProtocol
	cfg.Mooncake.Workers = DefaultWorkers
	cfg.Mooncake.RowsPerCall = DefaultRowsPerCall
	cfg.Mooncake.BytesPerCall = DefaultBytesPerCall

	var shape fileShape
	md, err := toml.Decode(string(data), &shape)
	if err != nil {
		return cfg, []*ConfigError{parseFinding(file, err)}, nil
	}
	d := &configDecoder{file: file, md: md, refused: map[string]bool{}}

	var blob blobShape
	if d.section("blob", shape.Blob, &blob) {
		cfg.Blob.KeyPrefix, _ = d.str("blob", "key_prefix", blob.KeyPrefix, cfg.Blob.KeyPrefix)
		cfg.Blob.RowsPerCall = int(d.nonNegative("blob", "rows_per_call", blob.RowsPerCall, 0))
		cfg.Blob.BytesPerCall = d.nonNegative("blob", "bytes_per_call", blob.BytesPerCall, 0)
	}

	var mc mooncakeShape
	if d.section("mooncake", shape.Mooncake, &mc) {
		m := &cfg.Mooncake
		m.Library, _ = d.str("mooncake", "library", mc.Library, "")
		m.SDKSHA256 = d.strs("mooncake", "sdk_sha256", mc.SDKSHA256)
		for i, h := range m.SDKSHA256 {
			m.SDKSHA256[i] = strings.ToLower(h)
		}
		if d.md.Type("mooncake", "master") == "Array" {
			d.refuse("mooncake", "master", "an HA master list is not supported: give one host:port")
		} else {
			m.Master, _ = d.str("mooncake", "master", mc.Master, "")
		}
		m.MetadataServer, _ = d.str("mooncake", "metadata_server", mc.MetadataServer, "")
		m.Protocol, _ = d.str("mooncake", "protocol", mc.Protocol, m.Protocol)
		m.Devices = d.strs("mooncake", "devices", mc.Devices)
		m.LocalHostname, _ = d.str("mooncake", "local_hostname", mc.LocalHostname, "")
		m.GlobalSegmentSize = uint64(d.nonNegative("mooncake", "global_segment_size", mc.GlobalSegmentSize, 0))
		m.LocalBufferSize = uint64(d.nonNegative("mooncake", "local_buffer_size", mc.LocalBufferSize, 0))
		m.Workers = int(d.integer("mooncake", "workers", mc.Workers, int64(m.Workers)))
		m.RowsPerCall = int(d.integer("mooncake", "rows_per_call", mc.RowsPerCall, int64(m.RowsPerCall)))
		m.BytesPerCall = d.integer("mooncake", "bytes_per_call", mc.BytesPerCall, m.BytesPerCall)
	}

	d.unknownKeys()
	return cfg, d.findings, d.refused
}

// parseFinding turns a TOML syntax error into a finding with its position.
func parseFinding(file string, err error) *ConfigError {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		return &ConfigError{File: file, Line: perr.Position.Line, Column: perr.Position.Col,
			Reason: "malformed TOML", Err: perr}
	}
	return &ConfigError{File: file, Reason: "malformed TOML", Err: err}
}

// section decodes one table into shape; false when the file has no such
// table or it is not a table.
func (d *configDecoder) section(name string, p toml.Primitive, shape any) bool {
	if !d.md.IsDefined(name) {
		return false
	}
	// A table defined only through a dotted sub-table ([mooncake.x]) has
	// no type of its own.
	if t := d.md.Type(name); t != "Hash" && t != "" {
		d.refuse(name, "", "must be a table, got %s", typeWords(t))
		return false
	}
	if err := d.md.PrimitiveDecode(p, shape); err != nil {
		d.refuse(name, "", "cannot decode: %v", err)
		return false
	}
	return true
}

// present reports whether section.key is in the file with TOML type want;
// a key of another type is refused, its value quoted.
func (d *configDecoder) present(section, key string, p toml.Primitive, want, wantWords string) bool {
	t := d.md.Type(section, key)
	switch t {
	case "":
		return false
	case want:
		return true
	}
	var v any
	_ = d.md.PrimitiveDecode(p, &v)
	d.refuse(section, key, "wants %s, got %s (%v)", wantWords, typeWords(t), v)
	return false
}

func (d *configDecoder) str(section, key string, p toml.Primitive, def string) (string, bool) {
	if !d.present(section, key, p, "String", "a string") {
		return def, false
	}
	var s string
	if err := d.md.PrimitiveDecode(p, &s); err != nil {
		d.refuse(section, key, "cannot decode: %v", err)
		return def, false
	}
	return s, true
}

func (d *configDecoder) strs(section, key string, p toml.Primitive) []string {
	if !d.present(section, key, p, "Array", "an array of strings") {
		return nil
	}
	var v []any
	if err := d.md.PrimitiveDecode(p, &v); err != nil {
		d.refuse(section, key, "wants an array of strings: %v", err)
		return nil
	}
	out := make([]string, len(v))
	for i, e := range v {
		s, ok := e.(string)
		if !ok {
			d.refuse(section, key, "wants an array of strings, item %d is %T (%v)", i, e, e)
			return nil
		}
		out[i] = s
	}
	return out
}

func (d *configDecoder) integer(section, key string, p toml.Primitive, def int64) int64 {
	if !d.present(section, key, p, "Integer", "an integer") {
		return def
	}
	var n int64
	if err := d.md.PrimitiveDecode(p, &n); err != nil {
		d.refuse(section, key, "cannot decode: %v", err)
		return def
	}
	return n
}

func (d *configDecoder) nonNegative(section, key string, p toml.Primitive, def int64) int64 {
	n := d.integer(section, key, p, def)
	if n < 0 {
		d.refuse(section, key, "must not be negative, got %d", n)
		return def
	}
	return n
}

// unknownKeys refuses every key no field took (MetaData.Undecoded), and
// every key that a field took only by a case-insensitive match.
func (d *configDecoder) unknownKeys() {
	for _, k := range d.md.Undecoded() {
		d.refuseUnknown(k)
	}
	for _, k := range d.md.Keys() {
		if len(k) > 2 || isKnown(k) {
			continue
		}
		if foldKnown(k) {
			d.refuseUnknown(k)
		}
	}
}

func (d *configDecoder) refuseUnknown(k toml.Key) {
	switch len(k) {
	case 1:
		if _, ok := knownKeys[k[0]]; ok {
			return // a known section left undecoded was refused already
		}
		if d.md.Type(k[0]) == "Hash" || d.md.Type(k[0]) == "ArrayHash" {
			d.refuse(k[0], "", "unknown section (known: [blob], [mooncake])")
		} else {
			d.refuse("", k[0], "unknown key")
		}
	default:
		section := k[0]
		if d.refused[section] {
			return
		}
		if _, ok := knownKeys[section]; !ok {
			return // inside an unknown section, refused with the section
		}
		if d.refused[section+"."+k[1]] {
			return // a key refused already, or a key inside it (a table where a value belongs)
		}
		if len(k) > 2 {
			d.refuse(section, k[1], "wants a value, got a table")
			return
		}
		d.refuse(section, k[1], "unknown key (known: %s)", strings.Join(knownKeys[section], ", "))
	}
}

func isKnown(k toml.Key) bool {
	keys, ok := knownKeys[k[0]]
	if !ok {
		return false
	}
	if len(k) == 1 {
		return true
	}
	for _, name := range keys {
		if name == k[1] {
			return true
		}
	}
	return false
}

func foldKnown(k toml.Key) bool {
	for section, keys := range knownKeys {
		if !strings.EqualFold(section, k[0]) {
			continue
		}
		if len(k) == 1 {
			return true
		}
		for _, name := range keys {
			if strings.EqualFold(name, k[1]) {
				return true
			}
		}
	}
	return false
}

// typeWords names a TOML type the way an error message should.
func typeWords(t string) string {
	switch t {
	case "Integer":
		return "an integer"
	case "Float":
		return "a float"
	case "String":
		return "a string"
	case "Bool":
		return "a boolean"
	case "Array":
		return "an array"
	case "Hash":
		return "a table"
	case "ArrayHash":
		return "an array of tables"
	case "Datetime", "DatetimeLocal", "DateLocal", "TimeLocal":
		return "a date or time"
	}
	return t
}
