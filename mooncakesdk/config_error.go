package mooncakesdk

import (
	"errors"
	"strconv"
	"strings"
)

// ConfigError is one refusal of a store config. It matches [ErrConfig]
// with errors.Is, and the underlying error (an [io/fs] error for an
// unreadable file, a toml.ParseError for malformed TOML) through Unwrap.
type ConfigError struct {
	// File is the config file.
	File string
	// Section is the TOML table ("blob", "mooncake"), or "" when the
	// refusal concerns the whole file or a key outside every table.
	Section string
	// Key is the key inside Section, or "" when the refusal concerns the
	// section itself or the whole file.
	Key string
	// Line and Column locate malformed TOML (1-based); 0 when unknown.
	Line, Column int
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error reads "mooncakesdk: store config FILE[:LINE:COL]: [SECTION] KEY:
// REASON[: underlying error]".
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("mooncakesdk: store config ")
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	switch {
	case e.Section != "" && e.Key != "":
		b.WriteString("[" + e.Section + "] " + e.Key + ": ")
	case e.Section != "":
		b.WriteString("[" + e.Section + "]: ")
	case e.Key != "":
		b.WriteString(e.Key + " (outside every section): ")
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns [ErrConfig] and the underlying error.
func (e *ConfigError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConfig}
	}
	return []error{ErrConfig, e.Err}
}

// joinFindings returns nil, the one finding, or all of them joined.
func joinFindings(findings []*ConfigError) error {
	switch len(findings) {
	case 0:
		return nil
	case 1:
		return findings[0]
	}
	errs := make([]error, len(findings))
	for i, f := range findings {
		errs[i] = f
	}
	return errors.Join(errs...)
}
