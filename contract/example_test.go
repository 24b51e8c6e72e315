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
		Err:          fmt.Errorf("%w: store timed out", contract.ErrDriverRejected),
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
