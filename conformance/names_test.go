package conformance

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// TestNamesLentAndRetired: the names of a batch are lent in a buffer of
// the suite's own; once retired they hold a fresh pattern, and the key
// maker reports being handed one of them, once per batch, naming its
// row; a copy taken while they were lent is not reported.
func TestNamesLentAndRetired(t *testing.T) {
	book := &nameBook{}
	k := suiteKeys{prefix: testPrefix, book: book}
	orig := contract.RowBatch{Keys: k, Rows: []contract.Row{
		{Name: []byte("c/first")}, {Name: []byte{}}, {Name: []byte("c/second")},
	}}
	lent, ln := lendNames(orig)
	ln.w = &watch{b: &bench{name: "c"}, label: "put of 3 rows", names: []string{"c/first", "", "c/second"}}
	for i, r := range lent.Rows {
		assert.Equal(t, orig.Rows[i].Name, r.Name, "row %d: the same name", i)
	}
	assert.NotSame(t, &orig.Rows[0].Name[0], &lent.Rows[0].Name[0], "in the suite's own buffer")
	assert.Equal(t, len(lent.Rows[0].Name), cap(lent.Rows[0].Name), "a name cannot be grown into the next")
	copied := bytes.Clone(lent.Rows[2].Name)
	key := lent.Key(2)

	book.retire(ln, 1)
	assert.NotEqual(t, []byte("c/second"), lent.Rows[2].Name, "written over")
	assert.Equal(t, "c/first", string(orig.Rows[0].Name), "the check's own batch keeps its names")
	assert.Equal(t, key, k.key(string(copied)), "a copy taken while lent builds the key it did")
	assert.Empty(t, book.findings())

	lent.Key(2)
	lent.Key(0)
	found := book.findings()
	require.Len(t, found, 1, "once per batch")
	assert.Contains(t, found[0], `put of 3 rows: row 2 (name "second"): the key maker was handed the row's name after the operation's access ended`)
	lent.Key(0)
	assert.Empty(t, book.findings())
}
