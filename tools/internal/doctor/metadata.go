package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// p2pHandshake is the metadata_server value that uses no metadata
// server: peers exchange their descriptors directly.
const p2pHandshake = "P2PHANDSHAKE"

// checkMetadata asks an HTTP metadata server for a key nobody wrote: the
// master's built-in server answers 404 "metadata not found", which is
// the healthy answer. P2PHANDSHAKE needs no server; other kinds of
// server (etcd, redis) are not checked.
func checkMetadata(ctx context.Context, server string, wait time.Duration) Finding {
	if strings.EqualFold(server, p2pHandshake) {
		return ok(CheckMetadata, "%s: no metadata server to reach", server)
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return fail(CheckMetadata, "%q is not a URL (want http://host:port/metadata, or P2PHANDSHAKE)", server)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return skip(CheckMetadata, "%s: only http(s) metadata servers are checked", server)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	probe := *u
	q := probe.Query()
	q.Set("key", "kvshare-doctor-probe")
	probe.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe.String(), nil)
	if err != nil {
		return fail(CheckMetadata, "%s: %v", server, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail(CheckMetadata, "%s does not answer: %v (is the master started with --enable_http_metadata_server and this host and port?)", server, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	text := strings.TrimSpace(string(body))
	switch {
	case resp.StatusCode == http.StatusNotFound && strings.Contains(text, "metadata not found"):
		return ok(CheckMetadata, "%s answers (HTTP 404 %q for a key nobody wrote, as a metadata server does)", server, text)
	case resp.StatusCode == http.StatusOK:
		return ok(CheckMetadata, "%s answers (HTTP 200)", server)
	}
	return fail(CheckMetadata, "%s answered HTTP %d %q, not as a metadata server does: %s",
		server, resp.StatusCode, text, metadataHint(u))
}

func metadataHint(u *url.URL) string {
	if u.Path != "/metadata" {
		return fmt.Sprintf("the master's server is at http://%s/metadata", u.Host)
	}
	return "is this host and port the master's --http_metadata_server_port?"
}
