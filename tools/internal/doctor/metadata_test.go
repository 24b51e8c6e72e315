package doctor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/patience"
)

func TestMetadata(t *testing.T) {
	good := metadataServer(t)
	root := strings.TrimSuffix(good, "/metadata")
	down := "http://" + closedPort(t) + "/metadata"
	for _, c := range []struct {
		name    string
		server  string
		verdict Verdict
		want    string
	}{
		{"the master's server", good, OK, `HTTP 404 "metadata not found"`},
		{"wrong path", root + "/", Fail, "the master's server is at " + good},
		{"nobody there", down, Fail, "does not answer"},
		{"peer handshake", "P2PHANDSHAKE", OK, "no metadata server"},
		{"etcd", "etcd://127.0.0.1:2379", Skip, "only http(s)"},
		{"not a URL", "127.0.0.1:28180", Fail, "not a URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := checkMetadata(t.Context(), c.server, patience.Wait())
			assert.Equal(t, CheckMetadata, f.Check)
			assert.Equal(t, c.verdict, f.Verdict, f.Detail)
			assert.Contains(t, f.Detail, c.want)
		})
	}
}
