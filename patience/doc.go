// Package patience bounds the waits of kvshare's tests and of the driver
// conformance suite so that they survive a slow, busy machine and still
// catch what hangs.
//
// A test that waits for something — a driver call to return, an
// operation to settle, a drain to answer — must give up some time, or a
// hung driver hangs the run. Any fixed bound is wrong somewhere: on a
// shared CI runner with eight other processes on two cores, a wait that
// takes 50 ms on a quiet machine can take seconds. patience answers with
// two things:
//
//   - One setting. Every bound is a base duration times [Scale], read
//     once from the environment variable KVSHARE_WAIT_SCALE (a positive
//     number, default 1), so a whole run on a slow machine is made more
//     patient with one variable. The repository's tests take their bounds
//     from [Wait]; the conformance suite scales its Harness.Wait.
//   - Extensions only when they are earned. A [Bound] that runs out is
//     extended by its own span, at most [MaxExtensions] times, and only
//     if over the span just ended the process was starved — its threads'
//     time waiting on a run queue grew by more than 1/[StarvedShare] of
//     the span — or the caller's Moved function says what it waits for
//     changed. A span over which the process ran freely and nothing moved
//     ends the wait: a hung driver on a quiet machine is caught after one
//     span, on a loaded one after at most 1+MaxExtensions. Every extension
//     is logged, with its reason.
//
// Starvation is read from the kernel: the run-queue delay of every thread
// of the process (field 2 of /proc/self/task/*/schedstat, in
// nanoseconds); where that cannot be read, the cgroup's CPU pressure
// (the "some" total of cpu.pressure, or of /proc/pressure/cpu); where
// neither can, never starved, so only Moved extends. [Starvation] says
// which source a machine gave.
//
// It refuses a KVSHARE_WAIT_SCALE that is not a number in (0, 1000]:
// [Scale] returns the error, naming the variable and the value. It
// imports only the standard library; it reads /proc on Linux alone
// (elsewhere nothing is starved).
package patience
