package mooncakesdk

import "github.com/kvshare/kvshare/storeconfig"

// ConfigError is one refusal of a store config: storeconfig's, which
// every store's refusals share. It matches [ErrConfig] with errors.Is,
// and the underlying error (an io/fs error for an unreadable file, a
// TOML parse error) through Unwrap.
type ConfigError = storeconfig.Error
