package metrics_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrape is one scrape of an endpoint: each metric family by name.
type scrape map[string]*dto.MetricFamily

func scrapeURL(t *testing.T, url string) scrape {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "the endpoint serves Prometheus text:\n%s", body)
	return families
}

// value returns the value of family name's metric whose labels include
// every one of labels (name, value pairs).
func (s scrape) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	f, ok := s[name]
	require.True(t, ok, "no metric family %s", name)
	var found []float64
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			switch {
			case m.GetCounter() != nil:
				found = append(found, m.GetCounter().GetValue())
			case m.GetGauge() != nil:
				found = append(found, m.GetGauge().GetValue())
			}
		}
	}
	require.Len(t, found, 1, "%s%v: want exactly one point", name, labels)
	return found[0]
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		ok := false
		for _, l := range m.GetLabel() {
			ok = ok || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
		}
		if !ok {
			return false
		}
	}
	return true
}
