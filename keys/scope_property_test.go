package keys

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// randomText returns a text field's value: empty, short ASCII, non-ASCII
// or up to the length limit.
func randomText(r *rand.Rand) string {
	switch r.IntN(5) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("v%d", r.IntN(1000))
	case 2:
		return strings.Repeat("é", r.IntN(MaxScopeFieldBytes/2)+1)
	case 3:
		return strings.Repeat("x", MaxScopeFieldBytes-r.IntN(3))
	}
	var b strings.Builder
	for n := r.IntN(40) + 1; n > 0; n-- {
		b.WriteRune([]rune("aZ09-_./:é日🙂 ,;")[r.IntN(15)])
	}
	return b.String()
}

// randomNumber returns a number field's value: small, large or 0.
func randomNumber(r *rand.Rand) uint32 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return r.Uint32()
	}
	return r.Uint32N(130)
}

// randomScope returns a valid scope with random fields.
func randomScope(r *rand.Rand) Scope {
	for {
		var s Scope
		for _, f := range scopeFields {
			setRandom(r, &s, f)
		}
		if s.Validate() == nil {
			return s
		}
	}
}

// setRandom sets one field of s to a random value.
func setRandom(r *rand.Rand, s *Scope, f scopeField) {
	if f.text != nil {
		*f.text(s) = randomText(r)
	} else {
		*f.num(s) = randomNumber(r)
	}
}

// TestScopesDifferingInOneFieldShareNoKey: for every field, random
// pairs of valid scopes equal in every other field never share a key,
// a digest or an encoding.
func TestScopesDifferingInOneFieldShareNoKey(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 45))
	const pairs = 100
	for _, f := range scopeFields {
		t.Run(f.name, func(t *testing.T) {
			for found := 0; found < pairs; {
				a := randomScope(r)
				b := a
				setRandom(r, &b, f)
				if b.Validate() != nil || f.String(&a) == f.String(&b) {
					continue // not a valid scope differing in f: draw again
				}
				found++
				ta, _ := a.MarshalText()
				tb, _ := b.MarshalText()
				da, _ := a.Digest()
				db, _ := b.Digest()
				if bytes.Equal(ta, tb) || da == db {
					t.Fatalf("scopes differing in %s only share encoding %v or digest %v (%s)", f.name, bytes.Equal(ta, tb), da == db, ta)
				}
				prefix := []string{"kvshare", "kv/run-1", strings.Repeat("p", MaxPrefixBytes)}[r.IntN(3)]
				sa, errA := NewScopedStem(prefix, a)
				sb, errB := NewScopedStem(prefix, b)
				if errA != nil || errB != nil {
					t.Fatalf("NewScopedStem: %v, %v", errA, errB)
				}
				name := make([]byte, r.IntN(64)+1)
				for i := range name {
					name[i] = byte(r.Uint32())
				}
				ka, _ := sa.Key(name)
				kb, _ := sb.Key(name)
				if ka == kb {
					t.Fatalf("scopes differing in %s only (%q, %q) share key %s", f.name, f.String(&a), f.String(&b), ka)
				}
			}
		})
	}
}

// keysChildEnv, set, makes TestKeysChildProcess the child of
// TestSameScopeAndNameGiveTheSameKeyInEveryProcess.
const keysChildEnv = "KVSHARE_KEYS_CHILD"

// keyCase is one scope, prefix and name whose key a process computes.
type keyCase struct {
	Scope  Scope
	Prefix string
	Name   string // hex
	Key    string // the key, as the process computing it made it
}

// computeKeys fills in each case's Key.
func computeKeys(cases []keyCase) error {
	for i := range cases {
		stem, err := NewScopedStem(cases[i].Prefix, cases[i].Scope)
		if err != nil {
			return err
		}
		name, err := hex.DecodeString(cases[i].Name)
		if err != nil {
			return err
		}
		if cases[i].Key, err = stem.Key(name); err != nil {
			return err
		}
	}
	return nil
}

// TestKeysChildProcess is the child process: it reads cases as JSON from
// stdin and writes them back, keys filled in, on one line after "keys:".
func TestKeysChildProcess(t *testing.T) {
	if os.Getenv(keysChildEnv) != "1" {
		t.Skip("the child of TestSameScopeAndNameGiveTheSameKeyInEveryProcess")
	}
	var cases []keyCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	if err := computeKeys(cases); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\nkeys:%s\n", out)
}

// TestSameScopeAndNameGiveTheSameKeyInEveryProcess runs the test binary
// again as a child process, hands it random scopes, prefixes and names,
// and checks it makes the keys this process makes, byte for byte.
func TestSameScopeAndNameGiveTheSameKeyInEveryProcess(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	cases := make([]keyCase, 64)
	for i := range cases {
		name := make([]byte, r.IntN(64)+1)
		for j := range name {
			name[j] = byte(r.Uint32())
		}
		cases[i] = keyCase{Scope: randomScope(r), Prefix: fmt.Sprintf("kvshare/run-%d", r.IntN(100)), Name: hex.EncodeToString(name)}
	}
	input, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeysChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), keysChildEnv+"=1")
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_, line, ok := strings.Cut(string(out), "\nkeys:")
	if !ok {
		t.Fatalf("child wrote no keys:\n%s", out)
	}
	line, _, _ = strings.Cut(line, "\n")
	var theirs []keyCase
	if err := json.Unmarshal([]byte(line), &theirs); err != nil {
		t.Fatalf("child's keys: %v", err)
	}
	if err := computeKeys(cases); err != nil {
		t.Fatal(err)
	}
	if len(theirs) != len(cases) {
		t.Fatalf("child made %d keys, want %d", len(theirs), len(cases))
	}
	for i := range cases {
		if theirs[i] != cases[i] {
			t.Errorf("case %d: child made %q, this process %q", i, theirs[i].Key, cases[i].Key)
		}
	}
	if cmd.Process.Pid == os.Getpid() {
		t.Fatal("the child is this process")
	}
}
