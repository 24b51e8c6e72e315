package contract_test

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

func ExampleOutcome_Prefix() {
	// Rows 0 and 1 arrived, row 2 missed, row 3 arrived: only the first
	// two can be reused as a KV cache prefix.
	o := contract.Outcome{Delivered: []bool{true, true, false, true}}
	fmt.Println(o.Prefix())
	// Output: 2
}

func ExampleRegistrationError() {
	// A driver's registration failed after the store may have taken the
	// region: the caller must keep the memory and revoke the handle.
	var err error = &contract.RegistrationError{
		Registration: 7,
		Err:          errors.New("the store timed out after taking the region"),
	}
	var re *contract.RegistrationError
	if errors.As(err, &re) && re.MayBeLive() {
		fmt.Println("keep the hold, revoke registration", re.Registration)
	}
	// Output: keep the hold, revoke registration 7
}

func Example_errorMatching() {
	// Errors are sentinels wrapped with a reason.
	err := fmt.Errorf("%w: group 2 row 5: slot 99 out of range (region has 64 slots)", contract.ErrInvalidSubmission)
	fmt.Println(errors.Is(err, contract.ErrInvalidSubmission))
	fmt.Println(errors.Is(err, contract.ErrSubmissionRejected))
	fmt.Println(err)
	// Output:
	// true
	// false
	// kvshare: invalid submission: group 2 row 5: slot 99 out of range (region has 64 slots)
}

// plainKeys is a toy key maker: "demo/" and the name as it is. Real key
// makers (keys.Stem) must also be injective for every byte, and never
// emit a NUL; this one is fine for names of letters.
type plainKeys struct{}

func (plainKeys) KeyLen(n int) int                  { return len("demo/") + n }
func (plainKeys) AppendKey(dst, name []byte) []byte { return append(append(dst, "demo/"...), name...) }

func ExampleRowBatch_AppendKey() {
	b := contract.RowBatch{Keys: plainKeys{}, Rows: []contract.Row{
		{Name: []byte("block-a")}, {Name: []byte("block-b")},
	}}
	// A driver writes every key of the batch into one buffer of its own,
	// NUL-separated as a C key list wants it, with no Go string made.
	var list []byte
	for i := range b.Rows {
		list = append(b.AppendKey(list, i), 0)
	}
	fmt.Printf("%q\n", list)
	fmt.Println(b.Key(1)) // allocates: for errors and logs
	// Output:
	// "demo/block-a\x00demo/block-b\x00"
	// demo/block-b
}
